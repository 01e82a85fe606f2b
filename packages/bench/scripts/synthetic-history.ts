/**
 * A data directory filled with `total` demo-size elements, for measurements of a long history:
 * 100 rendered demo elements whose frames are reused with their own ids, IRIs and times (rendering
 * 100 000 elements would take minutes; their size and compression are the demo stream's).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { elementId, formatNames } from '@rdf-stream/protocol';
import {
  defaults,
  elementGraphIri,
  elementQuads,
  FileEventLog,
  JsonLdWriter,
  loadBundledContext,
  type LoggedElement,
  ParkingSimulator,
  renderElement,
  streamIri,
} from '@rdf-stream/publisher';

export async function syntheticHistory(total: number, base: string, pageElements: number = defaults.pageElements): Promise<{ dataDir: string; fillSeconds: number }> {
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
    const frames = Object.fromEntries(
      formatNames.map((format) => {
        const frame = template.frames[format].toString('utf8');
        // The template's own id and IRI become this element's.
        const templateId = elementId(log.epoch, (seq % templates.length) + 1);
        const text = frame.replace(new RegExp(`${templateId}(?=[>#"\\n])`, 'g'), elementId(log.epoch, seq));
        return [format, Buffer.from(text.replaceAll(template.generatedAt.toISOString(), generatedAt.toISOString()))];
      }),
    ) as LoggedElement['frames'];
    return { streamId: 'parking', seq, graph: elementGraphIri(base, 'parking', log.epoch, seq), generatedAt, frames };
  };

  const filling = Date.now();
  const batch = 1_000;
  for (let from = 1; from <= total; from += batch) {
    await Promise.all(Array.from({ length: Math.min(batch, total - from + 1) }, (_, index) => log.append(element(from + index))));
    process.stderr.write(`\rfilling: ${Math.min(total, from + batch - 1)} / ${total}`);
  }
  const fillSeconds = (Date.now() - filling) / 1000;
  await log.close();
  process.stderr.write('\n');
  return { dataDir, fillSeconds };
}
