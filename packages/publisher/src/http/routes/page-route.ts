import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { streamPath, STREAMS_PATH } from '@rdf-stream/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { compressOnce, type EncodedBodies } from '../../render/compress.js';
import { parseAccept, preferredMediaType } from '../../render/headers/media-range.js';
import { negotiateEncoding } from '../../render/headers/negotiate.js';
import { acceptableTypes } from '../../render/headers/requested-format.js';
import { PublisherError } from '../../errors.js';
import type { AppContext } from '../app-context.js';

/**
 * Where `pnpm build` (and `pnpm start`) put the live page: packages/dashboard's build writes
 * it into the publisher's own folder, as the ontologies are copied, so the publisher serves it
 * without depending on the dashboard package.
 */
export const PAGE_ASSETS_DIRECTORY = fileURLToPath(new URL('../../../page-assets/', import.meta.url));

/** The URL prefix of the page's scripts and styles (hashed, immutable names). */
export const PAGE_ASSETS_PATH = '/page/';

const HTML_FILE = 'index.html';

const mediaTypeOfExtension: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
};

interface PageFile {
  readonly contentType: string;
  readonly bodies: EncodedBodies;
}

/** The built page, held in memory and compressed once, at start. */
export interface PageAssets {
  readonly html: PageFile;
  readonly files: ReadonlyMap<string, PageFile>;
}

/**
 * Reads the built page, or resolves to undefined when it is not built: the publisher then
 * serves RDF as ever and the page's URLs answer 503 saying how to build it. The build writes
 * each file precompressed beside it (`.br`, `.gz`); a file without them is compressed here, once.
 */
export async function loadPageAssets(directory: string = PAGE_ASSETS_DIRECTORY): Promise<PageAssets | undefined> {
  if (!existsSync(join(directory, HTML_FILE))) return undefined;
  const files = new Map<string, PageFile>();
  let html: PageFile | undefined;
  for (const name of readdirSync(directory)) {
    const contentType = mediaTypeOfExtension[extname(name)];
    if (contentType === undefined) continue;
    const file = { contentType, bodies: await readEncoded(join(directory, name)) };
    if (name === HTML_FILE) html = file;
    else files.set(name, file);
  }
  return html === undefined ? undefined : { html, files };
}

/** A built file's bodies: the identity file and its `.br`, `.gz` beside it, or, without them, compressed here once. */
export async function readEncoded(path: string): Promise<EncodedBodies> {
  const identity = readFileSync(path);
  if (!existsSync(`${path}.br`) || !existsSync(`${path}.gz`)) return compressOnce(identity);
  return Object.freeze({ identity, br: readFileSync(`${path}.br`), gzip: readFileSync(`${path}.gz`) });
}

/** Media types offered to a `GET` of a page URL: RDF first, so that `*\/*` and ties still get RDF. */
const offeredToBrowsers = [...acceptableTypes, 'text/html'];

/**
 * Whether `Accept` rates text/html above every RDF type we serve (a browser's navigation does;
 * `*\/*`, an RDF client, or no header do not), by the RDF routes' own rule: a `profile` or
 * `charset=utf-8` on an RDF type keeps it an RDF request.
 */
export function prefersHtml(accept: string | undefined): boolean {
  if (accept === undefined || !accept.toLowerCase().includes('html')) return false;
  return preferredMediaType(parseAccept(accept), offeredToBrowsers) === 'text/html';
}

const notBuilt = () =>
  new PublisherError('PUB_ERR_PAGE_NOT_BUILT', 'The live page is not built: run `pnpm build` (or `pnpm start`, which builds it) and restart the publisher');

function send(request: FastifyRequest, reply: FastifyReply, file: PageFile, cacheControl: string): FastifyReply {
  const encoding = negotiateEncoding(request.headers['accept-encoding']) ?? 'identity';
  reply.headers({ 'content-type': file.contentType, 'cache-control': cacheControl, 'x-content-type-options': 'nosniff' });
  if (encoding !== 'identity') reply.header('content-encoding', encoding);
  return reply.send(file.bodies[encoding]);
}

function sendPage(request: FastifyRequest, reply: FastifyReply, assets: PageAssets | undefined): FastifyReply {
  reply.header('vary', 'Accept, Accept-Encoding');
  if (assets === undefined) throw notBuilt();
  // The page names its scripts by content hash: the HTML must be revalidated, they need not.
  return send(request, reply, assets.html, 'no-cache');
}

/**
 * A root `onRequest` hook: a `GET` or `HEAD` of a stream's IRI that prefers text/html gets the
 * live page; every other request goes on to the RDF routes unchanged. The stream IRI stays one
 * IRI for people and machines (`Vary: Accept` on both answers).
 */
export function pageNegotiationHook(context: AppContext, assets: PageAssets | undefined): onRequestHookHandler {
  return (request, reply, done) => {
    if (
      (request.method === 'GET' || request.method === 'HEAD') &&
      request.routeOptions.url === streamPath(':id') &&
      context.hubs.has((request.params as { id: string }).id) &&
      prefersHtml(request.headers.accept)
    ) {
      try {
        sendPage(request, reply, assets);
      } catch (error) {
        done(error as Error);
      }
      return;
    }
    done();
  };
}

/**
 * Registers the page on the root instance: the negotiation hook must see requests routed to
 * other plugins (the stream IRIs), so it cannot live inside the page's own scope.
 */
export async function registerPage(app: FastifyInstance, context: AppContext, directory: string = context.pageAssetsDirectory ?? PAGE_ASSETS_DIRECTORY): Promise<void> {
  const assets = await loadPageAssets(directory);
  app.addHook('onRequest', pageNegotiationHook(context, assets));
  await app.register(async (scope) => pageRoute(scope, assets));
}

/** `GET /` (the catalogue page for browsers, else a redirect to the RDF catalogue) and the page's assets. */
export function pageRoute(app: FastifyInstance, assets: PageAssets | undefined): void {
  app.get('/', (request, reply) => {
    if (prefersHtml(request.headers.accept)) return sendPage(request, reply, assets);
    return reply.code(303).headers({ location: STREAMS_PATH, vary: 'Accept' }).send();
  });

  app.get<{ Params: { file: string } }>(`${PAGE_ASSETS_PATH}:file`, (request, reply) => {
    if (assets === undefined) throw notBuilt();
    const file = assets.files.get(request.params.file);
    if (file === undefined) throw new PublisherError('PUB_ERR_ROUTE_NOT_FOUND', 'No such file of the live page');
    reply.header('vary', 'Accept-Encoding');
    return send(request, reply, file, 'public, max-age=31536000, immutable');
  });
}
