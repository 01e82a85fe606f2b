import { formatNames } from '@rdf-stream/protocol';
import type { LoggedElement } from '../../src/render/render-element.js';

/** A small logged element whose documents name its sequence number (for log tests). */
export function loggedElement(seq: number, generatedAt = new Date(1_800_000_000_000 + seq * 1000), epoch = 'testepoch'): LoggedElement {
  const documents = Object.fromEntries(
    formatNames.map((format) => [format, Buffer.from(`${format} element ${seq}${format === 'jsonld' ? '' : '\n'}`)]),
  ) as LoggedElement['documents'];
  return { streamId: 'parking', epoch, seq, graph: `http://127.0.0.1:8080/streams/parking/elements/${epoch}-${seq}`, generatedAt, documents };
}
