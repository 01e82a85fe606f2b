import type { EvictionReason } from './subscriber.js';

/** What the publishing core reports; `http/prometheus-metrics.ts` turns it into Prometheus metrics. */
export interface StreamMetrics {
  elementPublished(streamId: string): void;
  broadcastFinished(streamId: string, durationSeconds: number, subscribers: number): void;
  subscribersChanged(streamId: string, count: number): void;
  subscriberEvicted(streamId: string, reason: EvictionReason): void;
  longPollWaitersChanged(streamId: string, count: number): void;
}

export const noMetrics: StreamMetrics = {
  elementPublished() {},
  broadcastFinished() {},
  subscribersChanged() {},
  subscriberEvicted() {},
  longPollWaitersChanged() {},
};
