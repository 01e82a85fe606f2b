import type { StreamMetrics } from '../../src/publish/stream-metrics.js';

/** Metrics that record nothing, for tests that do not look at them. */
export const noMetrics: StreamMetrics = {
  elementPublished() {},
  elementServed() {},
  broadcastFinished() {},
  subscribersChanged() {},
  transportSubscribersChanged() {},
  subscriberEvicted() {},
  longPollWaitersChanged() {},
};
