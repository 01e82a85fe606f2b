import type { ResultMediaTypes, SparqlResultKind } from '../../render/sparql-result-formats.js';
import type { SparqlSyntaxError } from './sparql-syntax-error.js';

/** What the query thread is started with. */
export interface WorkerOptions {
  /** Quads of the windows' stores the thread keeps built (count; 0: none). */
  readonly cacheQuads: number;
}

/** An element of a query's window: its graph, and its N-Quads document unless the thread holds it parsed. */
export interface WindowElement {
  readonly graph: string;
  readonly nquads?: Uint8Array;
}

/** The messages the publisher sends the query thread. */
export type WorkerMessage =
  | {
      readonly kind: 'query';
      readonly id: number;
      readonly query: string;
      /** Resolves relative IRIs of the query: the endpoint's URL. */
      readonly baseIri: string;
      /** Names the window's elements (stream, epoch, first and last seq): the key of its store. */
      readonly windowKey: string;
      readonly elements: readonly WindowElement[];
      readonly mediaTypes: ResultMediaTypes;
      readonly maxResults: number;
    }
  /** The thread may drop these parsed elements: the publisher no longer counts on them. */
  | { readonly kind: 'forget'; readonly graphs: readonly string[] };

/** How a query ended, as the query thread tells it (a time-out or a full queue the engine adds). */
export type SparqlOutcome =
  | {
      readonly kind: 'result';
      readonly resultKind: SparqlResultKind;
      readonly mediaType: string;
      readonly body: string;
      /** Rows or triples (1 for a boolean). */
      readonly count: number;
      /** Whether the window's store was kept from an earlier query (`sparqlCacheQuads`), rather than built. */
      readonly storeReused: boolean;
    }
  | ({ readonly kind: 'syntax' } & SparqlSyntaxError)
  | { readonly kind: 'update' }
  | { readonly kind: 'not-acceptable'; readonly resultKind: SparqlResultKind }
  | { readonly kind: 'too-many-results'; readonly maxResults: number }
  | { readonly kind: 'unsupported'; readonly message: string }
  | { readonly kind: 'timeout'; readonly timeoutMs: number }
  | { readonly kind: 'busy'; readonly maxQueued: number };
