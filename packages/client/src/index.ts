export {
  CONTEXT_PATH,
  type FormatName,
  formatOfContentType,
  isFormatName,
  mediaTypes,
  parseDayTimeDuration,
  sosaStreamContext,
  webSocketCloseCodes,
} from '@rdf-stream/protocol';
export { DecodeError, type DecodedElement, decodeElement } from './decode/decode-element.js';
export { type Observation, observationsOf } from './decode/observations.js';
export { type DeltaEvent, type DeltaGapEvent, type PatchEvent, type SnapshotEvent } from './decode/delta-feed.js';
export { applyRdfPatch, type RdfPatch, RdfPatchSyntaxError, parseRdfPatch } from './decode/rdf-patch.js';
export { type ClockOffset, type ClockSample, estimateOffset, measureClockOffset } from './latency/clock-offset.js';
export { LatencyRecorder, type LatencySummary } from './latency/latency-recorder.js';
export {
  type DeltaSubscription,
  readDescriptor,
  type StreamDescriptorFacts,
  type DecodeErrorEvent,
  type StreamUpdate,
  type SubscribeOptions,
  type Subscription,
  type SubscriptionEvent,
  streamEvents,
  subscribe,
  transportDefaults,
} from './subscribe.js';
export { type BackoffOptions, backoffDelay, retryAfterMs } from './transport/backoff.js';
export { type HistoryDocumentFormat, type HistoryMember, type HistoryPage, parseHistoryPage } from './transport/history-page.js';
export { type HistoryPosition, historyReader, type HistoryStart } from './transport/history-reader.js';
export { LongPollSession, type LongPollSessionOptions } from './transport/long-poll-session.js';
export { adaptMargin, holdLeadMs, holdSeconds, holdSpreadMs, lateHoldSeconds, type PollHints, type PollMoment, type SmartPollOptions, smartPollDelay } from './transport/poll-schedule.js';
export { type AnswerHeaders, type LatestSession, type PollAnswer, PollSession, type PollSessionOptions, type PollStrategy } from './transport/poll-session.js';
export { StoredAnswer } from './transport/stored-answer.js';
export { longPollTransport, pollTransport } from './transport/poll-transport.js';
export { type SseAnswer, SseSession, type SseSessionOptions } from './transport/sse-session.js';
export { sseTransport } from './transport/sse-transport.js';
export type { OpenWebSocket, WebSocketConnection, WebSocketEnd, WebSocketListener } from './transport/web-socket-connection.js';
export { type WebSocketClose, WebSocketSession, type WebSocketSessionOptions } from './transport/web-socket-session.js';
export { webSocketTransport, type WebSocketTransportOptions } from './transport/web-socket-transport.js';
export { type FailedAnswer, SubscriptionError } from './transport/subscription-error.js';
export { emptyStats } from './transport/transport-stats.js';
export type { GapEvent, RawElement, ReconnectEvent, TransportEvent, TransportName } from './transport/transport-event.js';
export type { TransportStats } from './transport/transport-stats.js';
export { ContinuousQuery, type ContinuousQueryOptions, type QueryResult, type Row, type WindowItem } from './query/continuous-query.js';
export { importComunica, loadQueryEngine, type QueryEngineLoader, type QueryEngineModule, type SparqlEngine } from './query/load-query-engine.js';
export { QUERY_ENGINE_PACKAGE, QUERY_ENGINE_VERSION_RANGE, QueryEngineMissingError } from './query/query-engine-missing-error.js';
export { type RunQueryOptions, runContinuousQuery } from './query/run-continuous-query.js';
export {
  parseRspQl,
  type RegisteredQuery,
  RspQlSyntaxError,
  type StreamOperator,
  type WindowDeclaration,
} from './query/rspql-parser.js';
export { CountWindowOperator } from './window/count-window-operator.js';
export { TimeWindowOperator, type TimeWindowOptions } from './window/time-window-operator.js';
export type { ClosedWindow, CountWindowSpec, TimeWindowSpec, WindowSpec, WindowStats } from './window/window-spec.js';
