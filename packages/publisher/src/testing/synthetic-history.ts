/**
 * A data directory filled with `total` demo-size elements of the stream `parking`, one every 5 s up
 * to now, for tests and measurements of a long history (start-up time, history pages, an LDES
 * replay): 100 rendered demo elements whose documents are reused with their own ids, IRIs and
 * times (rendering 100 000 elements would take minutes; their size and compression are the demo
 * stream's). Start a publisher on it with `--log file --data-dir {dataDir}`.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { elementId, formatNames, streamIri } from '@rdf-stream/protocol';
import { defaults } from '../config/defaults.js';
import { FileEventLog } from '../log/file-event-log.js';
import { loadBundledContext } from '../model/bundled-context.js';
import { elementQuads } from '../model/observation.js';
import { elementGraphIri } from '../model/stream-element.js';
import { JsonLdWriter } from '../render/jsonld-writer.js';
import { type LoggedElement, renderElement } from '../render/render-element.js';
import { ParkingSimulator } from '../source/parking-simulator.js';

export interface SyntheticHistoryOptions {
  /** Elements per history page (the publisher's `--page-elements`). */
  readonly pageElements?: number;
  /** Called after each batch of 1 000 elements: a long fill shows its progress. */
  readonly onProgress?: (filled: number, total: number) => void;
}

/** `base`: the publisher's base URL, which the element IRIs name (`http://127.0.0.1:{port}`). */
export async function syntheticHistory(
  total: number,
  base: string,
  { pageElements = defaults.pageElements, onProgress }: SyntheticHistoryOptions = {},
): Promise<{ dataDir: string; fillSeconds: number }> {
  const quiet = { info: () => {}, warn: () => {}, error: (fields: object, message: string) => console.error(message, fields) };
  const dataDir = mkdtempSync(join(tmpdir(), 'synthetic-history-'));
  const log = await FileEventLog.open({
    streamId: 'parking',
    directory: join(dataDir, 'streams', 'parking'),
    formats: formatNames,
    pageElements,
    retention: { retainedElements: total, retainedSeconds: 0 },
    cacheBytes: defaults.logCacheBytes,
    syncIntervalMs: 0,
    maxPendingBytes: 1024 * 1024 * 1024,
    retentionIntervalMs: 3_600_000,
    logger: quiet,
  });
  const jsonLd = new JsonLdWriter(loadBundledContext().document, `${base}/contexts/sosa-stream.jsonld`);
  const simulator = new ParkingSimulator({ streamIri: streamIri(base, 'parking'), facilities: defaults.facilities, intervalMs: 5_000, seed: 1 });
  const templates = Array.from({ length: 100 }, (_, index) => {
    const graph = elementGraphIri(base, 'parking', log.epoch, index + 1);
    // Distinct times, so that each template's can be told apart and replaced.
    const generatedAt = new Date(Date.now() + index);
    return renderElement({ streamId: 'parking', epoch: log.epoch, seq: index + 1, graph, generatedAt, quads: elementQuads(graph, generatedAt, simulator.step()) }, jsonLd);
  });
  const startMs = Date.now() - total * 5_000;
  const element = (seq: number): LoggedElement => {
    const template = templates[seq % templates.length]!;
    const generatedAt = new Date(startMs + seq * 5_000);
    const documents = Object.fromEntries(
      formatNames.map((format) => {
        const document = template.documents[format].toString('utf8');
        // The template's own id and IRI become this element's.
        const templateId = elementId(log.epoch, (seq % templates.length) + 1);
        const text = document.replace(new RegExp(`${templateId}(?=[>#"])`, 'g'), elementId(log.epoch, seq));
        return [format, Buffer.from(text.replaceAll(template.generatedAt.toISOString(), generatedAt.toISOString()))];
      }),
    ) as LoggedElement['documents'];
    return { streamId: 'parking', epoch: log.epoch, seq, graph: elementGraphIri(base, 'parking', log.epoch, seq), generatedAt, documents };
  };

  const filling = Date.now();
  const batch = 1_000;
  for (let from = 1; from <= total; from += batch) {
    await Promise.all(Array.from({ length: Math.min(batch, total - from + 1) }, (_, index) => log.append(element(from + index))));
    onProgress?.(Math.min(total, from + batch - 1), total);
  }
  const fillSeconds = (Date.now() - filling) / 1000;
  await log.close();
  return { dataDir, fillSeconds };
}
