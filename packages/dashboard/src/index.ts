export { type BuiltPage, buildPage, defaultOutputDirectory } from './build/build-page.js';
