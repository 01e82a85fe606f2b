// The public entry point: what embedding the publisher needs (packages/publisher/README.md,
// "Embed"). The facts of the protocol are `@rdf-stream/protocol`'s; the rest of `src/` is internal.
export { type PublisherConfig } from './config/config-schema.js';
export { defaults } from './config/defaults.js';
export { ConfigError, ConfigHelp, loadConfig } from './config/load-config.js';
export { type ErrorCode, PublisherError } from './errors.js';
export { buildApp } from './http/app.js';
export { elementQuads, type Observation } from './model/observation.js';
export { PUBLISHER_NODE_OPTIONS } from './node-options.js';
export type { StreamDefinition, StreamHub } from './publish/stream-hub.js';
export type { ElementSource, ObservationSink } from './source/element-source.js';
export { ManualSource } from './source/manual-source.js';
export { ParkingSimulator } from './source/parking-simulator.js';
export { WebApiSource } from './source/web-api-source.js';
export { createPublisher, type Publisher, type PublisherOptions } from './publisher.js';
