import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { BROWSER_CLIENT_PATH } from '@rdf-stream/protocol';
import type { FastifyInstance } from 'fastify';
import type { EncodedBodies } from '../../render/compress.js';
import { codedEntityTag, ifNoneMatchNamesFile } from '../../render/headers/etag.js';
import { negotiateEncoding } from '../../render/headers/negotiate.js';
import { PublisherError } from '../../errors.js';
import { PAGE_ASSETS_DIRECTORY, readEncoded } from './page-route.js';

/**
 * The client library for pages without a bundler, at `BROWSER_CLIENT_PATH`
 * (`/client/rdf-stream-live.js`): the client package's browser file, which the live page's build
 * (packages/dashboard) writes into the page's folder, so that the publisher serves it without
 * depending on the client package.
 */
export interface ClientFile {
  readonly bodies: EncodedBodies;
  /** The identity body's digest: the file's ETag in each coding is `codedEntityTag(tag, coding)`. */
  readonly tag: string;
}

/**
 * The name is stable (pages write it), so browsers keep the file but revalidate it on each use:
 * an unchanged file costs a 304 without a body; a publisher upgraded to a new client is seen at once.
 */
const CACHE_CONTROL = 'no-cache';

/** Reads the built file (precompressed beside it, or compressed here once), or undefined when it is not built. */
export async function loadClientFile(directory: string = PAGE_ASSETS_DIRECTORY): Promise<ClientFile | undefined> {
  const path = join(directory, BROWSER_CLIENT_PATH);
  if (!existsSync(path)) return undefined;
  const bodies = await readEncoded(path);
  return { bodies, tag: createHash('sha256').update(bodies.identity).digest('hex').slice(0, 32) };
}

const notBuilt = () =>
  new PublisherError(
    'PUB_ERR_PAGE_NOT_BUILT',
    `The browser client (${BROWSER_CLIENT_PATH}) is not built: run \`pnpm build\` (or \`pnpm start\`, which builds it) and restart the publisher`,
  );

/** `GET`/`HEAD` of the client file: JavaScript, in the coding the request prefers, with an ETag; 503 when not built. */
export function clientFileRoute(app: FastifyInstance, file: ClientFile | undefined): void {
  app.get(BROWSER_CLIENT_PATH, (request, reply) => {
    if (file === undefined) throw notBuilt();
    const encoding = negotiateEncoding(request.headers['accept-encoding']) ?? 'identity';
    reply.headers({ 'cache-control': CACHE_CONTROL, etag: codedEntityTag(file.tag, encoding), vary: 'Accept-Encoding' });
    if (ifNoneMatchNamesFile(request.headers['if-none-match'], file.tag)) return reply.code(304).send();
    reply.headers({ 'content-type': 'text/javascript; charset=utf-8', 'x-content-type-options': 'nosniff' });
    if (encoding !== 'identity') reply.header('content-encoding', encoding);
    return reply.send(file.bodies[encoding]);
  });
}
