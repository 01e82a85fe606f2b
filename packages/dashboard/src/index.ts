export { type BuiltPage, buildPage, defaultOutputDirectory } from './build/build-page.js';
export { type BuiltClientFile, buildClientFile } from './build/build-client-file.js';
