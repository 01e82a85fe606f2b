import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { BROWSER_CLIENT_PATH } from '@rdf-stream/protocol';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { registerProblemHandlers } from '../../../../src/http/problem.js';
import { clientFileRoute, loadClientFile } from '../../../../src/http/routes/client-file-route.js';

/** The browser client as packages/dashboard's build leaves it: the file, and its codings beside it unless `precompressed` is false. */
function builtFolder(source: string, precompressed = true): string {
  const directory = mkdtempSync(join(tmpdir(), 'client-file-'));
  const path = join(directory, BROWSER_CLIENT_PATH);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, source);
  if (precompressed) {
    writeFileSync(`${path}.br`, brotliCompressSync(source));
    writeFileSync(`${path}.gz`, gzipSync(source));
  }
  return directory;
}

const source = `export function subscribe(url) { return url; }\n${'// padding that compresses well\n'.repeat(40)}`;
let app: FastifyInstance | undefined;

async function serve(directory: string): Promise<FastifyInstance> {
  app = Fastify();
  registerProblemHandlers(app, 10);
  const file = await loadClientFile(directory);
  await app.register(async (scope) => clientFileRoute(scope, file));
  return app;
}

afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe(`GET ${BROWSER_CLIENT_PATH}`, () => {
  it.each([
    ['br', 'br', brotliDecompressSync],
    ['gzip, deflate', 'gzip', gunzipSync],
    [undefined, undefined, (body: Buffer) => body],
  ] as const)('with Accept-Encoding %s: the JavaScript module in that coding, revalidated on use, with its ETag', async (acceptEncoding, coding, decode) => {
    const server = await serve(builtFolder(source));
    const response = await server.inject({ url: BROWSER_CLIENT_PATH, headers: acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding } });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(response.headers['content-encoding']).toBe(coding);
    expect(response.headers['cache-control']).toBe('no-cache');
    expect(response.headers['vary']).toBe('Accept-Encoding');
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['etag']).toMatch(new RegExp(`^"[0-9a-f]{32}${coding === undefined ? '' : `-${coding}`}"$`));
    expect(decode(response.rawPayload).toString()).toBe(source);
  });

  it('answers 304 without a body to a client holding the file in any coding, 200 to one holding another file', async () => {
    const server = await serve(builtFolder(source));
    const first = await server.inject({ url: BROWSER_CLIENT_PATH, headers: { 'accept-encoding': 'gzip' } });
    const held = first.headers['etag'] as string;
    const again = await server.inject({ url: BROWSER_CLIENT_PATH, headers: { 'accept-encoding': 'br', 'if-none-match': held } });
    expect(again.statusCode).toBe(304);
    expect(again.rawPayload.length).toBe(0);
    expect(again.headers['etag']).toBe(held.replace('-gzip"', '-br"'));
    expect(again.headers['cache-control']).toBe('no-cache');
    const changed = await server.inject({ url: BROWSER_CLIENT_PATH, headers: { 'if-none-match': '"0123456789abcdef0123456789abcdef"' } });
    expect(changed.statusCode).toBe(200);
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const server = await serve(builtFolder(source));
    const response = await server.inject({ method: 'HEAD', url: BROWSER_CLIENT_PATH });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(response.rawPayload.length).toBe(0);
  });

  it('compresses once at start a file built without its codings', async () => {
    const file = (await loadClientFile(builtFolder(source, false)))!;
    expect(brotliDecompressSync(file.bodies.br).toString()).toBe(source);
    expect(gunzipSync(file.bodies.gzip).toString()).toBe(source);
  });

  it('answers 503 problem+json PUB_ERR_PAGE_NOT_BUILT, saying how to build it, when it is not built', async () => {
    const server = await serve(mkdtempSync(join(tmpdir(), 'client-file-')));
    const response = await server.inject({ url: BROWSER_CLIENT_PATH });
    expect(response.statusCode).toBe(503);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.json()).toMatchObject({ code: 'PUB_ERR_PAGE_NOT_BUILT', detail: expect.stringContaining('run `pnpm build`') });
    expect(response.json<{ detail: string }>().detail).toContain(BROWSER_CLIENT_PATH);
  });
});
