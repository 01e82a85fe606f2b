import type { ElementBytes } from '../collect/element-bytes.js';
import type { BenchMode } from '../fleet/worker-protocol.js';

/** What a run's answers were: for polling, how many of its requests were answered 304. */
export interface AnswerCounts {
  readonly requests: number;
  readonly notModified: number;
}

/**
 * Bytes the server sends per delivered update, headers and framing included (TCP/IP not):
 * - `sse`: one event (`id:` line, `data:` prefixes), compressed when the run asked for gzip;
 * - `websocket`: one text frame (header, `element {id}` line, the document);
 * - `poll`, `long-poll`: a 200 (status line, headers, body) per update, plus the 304s the run's
 *   clients got per 200 (for fixed polling at 4 Hz about one; a long-poll only when its wait ends).
 * Null when the element's size or that framing was not measured.
 */
export function wireBytesPerUpdate(mode: BenchMode, bytes: ElementBytes | null, answers: AnswerCounts, sseEncoding: 'identity' | 'gzip' = 'identity'): number | null {
  if (bytes === null) return null;
  switch (mode) {
    case 'sse':
      return sseEncoding === 'gzip' ? bytes.sseEventGzip : bytes.sseEvent;
    case 'websocket':
      return bytes.websocketFrame;
    case 'poll':
    case 'long-poll': {
      const full = answers.requests - answers.notModified;
      const notModifiedPerFull = full > 0 ? answers.notModified / full : 0;
      return Math.round(bytes.headers200 + bytes.identity + notModifiedPerFull * bytes.response304);
    }
  }
}
