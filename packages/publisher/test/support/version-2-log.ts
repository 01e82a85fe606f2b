import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { elementId, type FormatName, formatNames } from '@rdf-stream/protocol';
import { encodeRecord } from '../../src/log/log-record.js';
import type { LoggedElement } from '../../src/render/render-element.js';
import { sseFrame, trimFinalNewline } from '../../src/render/sse-frame.js';

/**
 * Writes a log as a publisher of log format version 2 (or 1) wrote it, into `directory`: a
 * `log.json` of that version and segment files whose records hold each format's SSE frame (`id:`
 * and the document as `data:` lines), deflated together, where version 3 holds the documents.
 * The record envelope (length, CRC-32, seq, time, graph, key) is the same in every version.
 */
export function writeVersion2Log(
  directory: string,
  log: { readonly epoch: string; readonly pageElements: number; readonly version?: 1 | 2; readonly formats?: readonly FormatName[] },
  elements: readonly LoggedElement[],
): void {
  const formats = log.formats ?? formatNames;
  mkdirSync(directory, { recursive: true });
  const meta = { format: 'rdf-stream-log', version: log.version ?? 2, epoch: log.epoch, pageElements: log.pageElements, formats, createdAt: new Date(0).toISOString() };
  writeFileSync(join(directory, 'log.json'), `${JSON.stringify(meta, null, 2)}\n`);
  const segments = new Map<number, Buffer[]>();
  for (const element of elements) {
    const frames = formats.map((format) =>
      Buffer.from(sseFrame({ id: elementId(log.epoch, element.seq), data: trimFinalNewline(element.documents[format].toString('utf8')) })),
    );
    const payload = deflateRawSync(Buffer.concat(frames.flatMap((frame) => [uint32(frame.length), frame])));
    const record = encodeRecord({ seq: element.seq, generatedAtMs: element.generatedAt.getTime(), graph: element.graph, idempotency: element.idempotency, payload });
    const page = Math.ceil(element.seq / log.pageElements);
    segments.set(page, [...(segments.get(page) ?? []), record]);
  }
  for (const [page, records] of segments) writeFileSync(join(directory, `${String(page).padStart(12, '0')}.seg`), Buffer.concat(records));
}

function uint32(value: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32LE(value);
  return bytes;
}
