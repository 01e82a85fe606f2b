import { formatNames } from '@rdf-stream/protocol';
import type { LoggedElement } from '../../src/render/render-element.js';

/** A small logged element whose frames name its sequence number (for log tests). */
export function loggedElement(seq: number, generatedAt = new Date(1_800_000_000_000 + seq * 1000), epoch = 'testepoch'): LoggedElement {
  const frames = Object.fromEntries(
    formatNames.map((format) => [format, Buffer.from(`id: ${epoch}-${seq}\ndata: ${format} element ${seq}\n\n`)]),
  ) as LoggedElement['frames'];
  return { streamId: 'parking', seq, graph: `http://127.0.0.1:8080/streams/parking/elements/${epoch}-${seq}`, generatedAt, frames };
}
