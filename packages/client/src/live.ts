/**
 * The light entry for pages (`@rdf-stream/client/live`): subscribing and measuring latency,
 * without the query engine. A page that imports the query (`@rdf-stream/client`) lazily keeps
 * Comunica (≈ 1.9 MB minified) out of what it needs to show its first values.
 */
export { type ClockOffset, measureClockOffset } from './latency/clock-offset.js';
export { LatencyRecorder, type LatencySummary } from './latency/latency-recorder.js';
export { type Observation, observationsOf } from './decode/observations.js';
export { type DeltaEvent, type PatchEvent, type SnapshotEvent } from './decode/delta-feed.js';
export { type DeltaSubscription, type StreamUpdate, type SubscribeOptions, type Subscription, type SubscriptionEvent, subscribe } from './subscribe.js';
export type { GapEvent, ReconnectEvent, TransportName } from './transport/transport-event.js';
