import type { CutReason, Transport } from './sse/push-subscriber.js';

/** What the publishing core reports; `http/prometheus-metrics.ts` turns it into Prometheus metrics. */
export interface StreamMetrics {
  elementPublished(streamId: string): void;
  /**
   * `/latest` (and the long-polls it releases) started serving an element produced while this
   * instance runs: seconds from its generation (`prov:generatedAtTime`) — its append made durable
   * and its formats compressed.
   */
  elementServed(streamId: string, delaySeconds: number): void;
  /**
   * One element written to every live subscriber: the broadcast's wall time (yields included),
   * the subscribers reached, and the CPU time of its batches alone (the process's, between
   * yields: what the writes cost, whatever else shared the machine).
   */
  broadcastFinished(streamId: string, durationSeconds: number, subscribers: number, cpuSeconds: number): void;
  /** Every push subscriber of the stream, all transports together. */
  subscribersChanged(streamId: string, count: number): void;
  /** The stream's subscribers of one transport. */
  transportSubscribersChanged(streamId: string, transport: Transport, count: number): void;
  subscriberEvicted(streamId: string, reason: CutReason): void;
  longPollWaitersChanged(streamId: string, count: number): void;
}
