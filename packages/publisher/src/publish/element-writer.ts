import type { Quad } from '@rdfjs/types';
import { elementId, GENID_PATH } from '@rdf-stream/protocol';
import { type EventLog, LogAppendError, LogSeqConflictError } from '../log/event-log.js';
import { elementQuads, elementQuadsFromTriples, type Observation } from '../model/observation.js';
import { skolemise } from '../model/skolemise.js';
import { elementGraphIri, type StreamElement } from '../model/stream-element.js';
import type { JsonLdWriter } from '../render/jsonld-writer.js';
import { type IdempotencyStamp, type LoggedElement, renderElement } from '../render/render-element.js';
import type { StreamMetrics } from './stream-metrics.js';

/**
 * Renderings of one element before its append gives up (count; 503 for ingest): a shared log
 * refuses an element rendered for a number another instance took first, which happens only when
 * instances append to one stream at the same instant. An instance with a burst queued (rendered
 * already) wins each race until its burst is written, so the other may lose as many times as
 * that burst is long: this bounds the burst one instance can outlast.
 */
const MAX_RENDERINGS = 256;

export interface ElementWriterOptions {
  readonly baseUrl: string;
  readonly streamId: string;
  readonly log: EventLog;
  readonly jsonLd: JsonLdWriter;
  readonly metrics: StreamMetrics;
  /** Called with each rendering before its append (`/latest` starts compressing it meanwhile). */
  readonly onRendered?: (element: LoggedElement) => void;
}

/**
 * Numbers and appends: the one place where elements get a sequence number. Each element is
 * rendered once, in every format, and appended to the log; the log announces it to readers
 * once it is durable. Only the process that writes the log has one.
 */
export class ElementWriter {
  readonly #options: ElementWriterOptions;

  constructor(options: ElementWriterOptions) {
    this.#options = options;
  }

  /** Appends one element built from `observations`; resolves with it once it is durable. */
  publish(observations: readonly Observation[], generatedAt: Date): Promise<LoggedElement> {
    return this.#append((graph) => elementQuads(graph, generatedAt, observations), generatedAt);
  }

  /**
   * Appends one element holding `triples` as given (ingest): they are moved into the element's
   * graph, their blank nodes skolemised (`skolemise`: IRIs under `/.well-known/genid/` naming the
   * element), and `idempotency` (the request's key, if it sent one) is stored with it, in the same
   * write. Same guarantees as `publish`; the caller has validated them.
   */
  publishTriples(triples: readonly Quad[], generatedAt: Date, idempotency?: IdempotencyStamp): Promise<LoggedElement> {
    const { baseUrl, streamId, log } = this.#options;
    return this.#append(
      (graph) => {
        const genidBase = `${baseUrl}${GENID_PATH}${streamId}/${elementId(log.epoch, log.nextSeq)}/`;
        return elementQuadsFromTriples(graph, generatedAt, skolemise(triples, genidBase));
      },
      generatedAt,
      idempotency,
    );
  }

  /**
   * Rendering is synchronous and `append` reserves the number at once, so elements are numbered
   * in the order of the calls while their syncs are shared (group commit). A shared log (Redis)
   * refuses an element rendered for a number another instance took first: it is rendered again
   * for the next number, up to `MAX_RENDERINGS` times. Rejects, with nothing appended, if
   * rendering or the append fails.
   */
  async #append(quadsOf: (graph: string) => Quad[], generatedAt: Date, idempotency?: IdempotencyStamp): Promise<LoggedElement> {
    const { log, metrics, streamId } = this.#options;
    for (let rendering = 1; ; rendering++) {
      const logged = this.#render(quadsOf, generatedAt, idempotency);
      this.#options.onRendered?.(logged);
      try {
        await log.append(logged);
      } catch (error) {
        if (!(error instanceof LogSeqConflictError)) throw error;
        if (rendering < MAX_RENDERINGS) continue;
        throw new LogAppendError(`${MAX_RENDERINGS} renderings of the element lost the race for a number to other writers`, 'CONTENDED', { cause: error });
      }
      metrics.elementPublished(streamId);
      return logged;
    }
  }

  #render(quadsOf: (graph: string) => Quad[], generatedAt: Date, idempotency: IdempotencyStamp | undefined): LoggedElement {
    const { baseUrl, streamId, log, jsonLd } = this.#options;
    const seq = log.nextSeq;
    const graph = elementGraphIri(baseUrl, streamId, log.epoch, seq);
    const element: StreamElement = { streamId, epoch: log.epoch, seq, graph, generatedAt, quads: quadsOf(graph) };
    const logged = renderElement(element, jsonLd);
    return idempotency === undefined ? logged : { ...logged, idempotency };
  }
}
