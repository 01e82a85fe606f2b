import { elementId, type FormatName } from '@rdf-stream/protocol';
import type { EventLog } from '../../log/event-log.js';
import type { SseEncoding, WireFrame } from '../../render/event-stream-encoder.js';
import { type GzipFragment, gzipFragment } from '../../render/gzip-fragment.js';
import { diffTriples, type TripleSet, tripleSetOf, writeRdfPatch } from '../../render/rdf-patch.js';
import type { LoggedElement } from '../../render/render-element.js';
import { sseFrame, trimFinalNewline } from '../../render/sse-frame.js';
import { elementDataMessage, messageFrames, type WebSocketFrames } from '../../render/websocket-frame.js';

/**
 * What a subscriber is fed: an element's frame in one of the RDF formats (`/events`, `/ws`), or
 * the element's RDF Patch from the previous element's `/latest` to its own (`/patches`,
 * `/ws?format=patch`).
 */
export type Feed = FormatName | 'patch';

/**
 * An element's patch, made once: its SSE frame, its gzip fragment and its data WebSocket frames
 * (the message `element {id}\n{patch}`, `/ws?format=patch`) on first use.
 */
interface PatchFrame {
  readonly identity: Buffer;
  /** The SSE data payload: the patch text without its final newline. */
  readonly data: string;
  gzip?: GzipFragment;
  webSocket?: WebSocketFrames;
}

/**
 * Memos tied to the element objects, as its gzip fragments are (`elementFrame`): they live as
 * long as the log's cache holds the element, so a broadcast and the catch-ups of the elements it
 * holds build each patch once, whatever the number of subscribers.
 */
const tripleSets = new WeakMap<LoggedElement, TripleSet>();
const patchFrames = new WeakMap<LoggedElement, PatchFrame>();

/** The triples `/latest` serves for `element`: its N-Triples document, parsed once. */
function triplesOf(element: LoggedElement): TripleSet {
  let triples = tripleSets.get(element);
  if (triples === undefined) {
    triples = tripleSetOf(element.documents.ntriples.toString('utf8'));
    tripleSets.set(element, triples);
  }
  return triples;
}

/** The element id `{epoch}-{seq}` (the SSE `id:`). */
const idOf = (element: LoggedElement) => elementId(element.epoch, element.seq);

/**
 * Builds `element`'s patch unless it is built already: the triples that left and entered the
 * default graph of `/latest` (what Turtle and N-Triples carry) between the previous element and
 * this one. Without a retained previous element (the first of the log, or one retention
 * removed), the patch has no `H prev` and adds every triple: a client holding anything else
 * re-reads the snapshot.
 */
export async function preparePatch(element: LoggedElement, log: Pick<EventLog, 'get'>): Promise<void> {
  if (patchFrames.has(element)) return;
  const previous = element.seq > 1 ? await log.get(element.seq - 1) : undefined;
  if (patchFrames.has(element)) return;
  let text: string;
  try {
    const { deleted, added } = diffTriples(previous === undefined ? new Set() : triplesOf(previous), triplesOf(element));
    text = writeRdfPatch({ id: element.graph, ...(previous === undefined ? {} : { prev: previous.graph }), deleted, added });
  } catch {
    // A document that cannot be read back (it never happens to documents n3 wrote): a patch that
    // follows nothing, so that every client holding a state reads the snapshot again, and the
    // broadcast goes on.
    text = writeRdfPatch({ id: element.graph, deleted: [], added: [] });
  }
  const data = trimFinalNewline(text);
  patchFrames.set(element, { identity: Buffer.from(sseFrame({ id: idOf(element), data })), data });
}

/** The patch frame of an element `preparePatch` has built, in `encoding` (gzip: compressed once). */
export function patchFrame(element: LoggedElement, encoding: SseEncoding): WireFrame {
  const frame = preparedPatch(element);
  if (encoding === 'identity') return frame.identity;
  return (frame.gzip ??= gzipFragment(frame.identity));
}

/**
 * The data WebSocket message of an element's patch that `preparePatch` has built: `element
 * {id}\n` and the SSE `/patches` data payload, made once (compressed once more on first use).
 */
export function patchWebSocketFrames(element: LoggedElement): WebSocketFrames {
  const frame = preparedPatch(element);
  return (frame.webSocket ??= messageFrames(elementDataMessage(idOf(element), frame.data)));
}

function preparedPatch(element: LoggedElement): PatchFrame {
  const frame = patchFrames.get(element);
  if (frame === undefined) throw new Error(`the patch of element ${element.seq} was not prepared`);
  return frame;
}
