import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readProblem } from '../support/problem.js';
import { parseRdf } from '../support/rdf.js';
import { startTestPublisher, type TestPublisher } from '../../src/testing.js';

/**
 * The history's content codings on a real socket (undici's `request` does not decode bodies):
 * every document in br, gzip and identity, compressed once when rendered, each coding with its
 * own ETag, any of which revalidates the document.
 */

const startMs = Date.now() - 3_600_000;
const codings = ['br', 'gzip', 'identity'] as const;
type Coding = (typeof codings)[number];

const decoded = (coding: Coding, bytes: Buffer) =>
  coding === 'br' ? brotliDecompressSync(bytes) : coding === 'gzip' ? gunzipSync(bytes) : bytes;

describe('history documents in br, gzip and identity (20 elements a page, 45 published)', () => {
  let running: TestPublisher;
  let root: string;
  let index: string;
  let fullPage: string;
  let openPage: string;

  /** A request with `accept-encoding` (none when undefined), its body as sent. */
  const raw = async (url: string, acceptEncoding: string | undefined, headers: Record<string, string> = {}) => {
    const response = await request(url, {
      headers: { accept: 'application/n-quads', ...(acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding }), ...headers },
    });
    return { status: response.statusCode, headers: response.headers, bytes: Buffer.from(await response.body.arrayBuffer()) };
  };

  beforeAll(async () => {
    running = await startTestPublisher({ flags: ['--page-elements', '20', '--retained-elements', '1000'] });
    for (let seq = 1; seq <= 45; seq++) await running.push(undefined, new Date(startMs + seq * 1000));
    const { epoch } = running.hub.log;
    root = `${running.hub.definition.iri}/history`;
    index = `${root}/index`;
    fullPage = `${root}/${epoch}-1`;
    openPage = `${root}/${epoch}-3`;
  });
  afterAll(() => running.close());

  it.each([
    ['the root', () => root],
    ['the time index', () => index],
    ['a full page', () => fullPage],
    ['the open page', () => openPage],
  ])('%s: each coding decodes to the identity body, with Content-Encoding, Vary and an ETag of its own', async (_name, url) => {
    const identity = await raw(url(), undefined);
    expect(identity.status).toBe(200);
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.headers.vary).toBe('Accept, Accept-Encoding');
    expect((await parseRdf('nquads', identity.bytes.toString('utf8'))).length).toBeGreaterThan(0);
    const etags = new Set([identity.headers.etag]);
    for (const coding of ['br', 'gzip'] as const) {
      const response = await raw(url(), coding);
      expect(response.status).toBe(200);
      expect(response.headers['content-encoding']).toBe(coding);
      expect(response.headers.vary).toBe('Accept, Accept-Encoding');
      expect(response.headers['content-type']).toBe(identity.headers['content-type']);
      expect(Number(response.headers['content-length'])).toBe(response.bytes.length);
      expect(response.bytes.length).toBeLessThan(identity.bytes.length);
      expect(decoded(coding, response.bytes).equals(identity.bytes)).toBe(true);
      expect(response.headers.etag).toBe(String(identity.headers.etag).replace(/"$/, `-${coding}"`));
      etags.add(response.headers.etag);
    }
    expect(etags.size).toBe(3);
  });

  it('prefers br when br and gzip are rated alike; honours q-values and identity', async () => {
    expect((await raw(fullPage, 'gzip, deflate, br')).headers['content-encoding']).toBe('br');
    expect((await raw(fullPage, 'br;q=0.5, gzip')).headers['content-encoding']).toBe('gzip');
    expect((await raw(fullPage, 'identity')).headers['content-encoding']).toBeUndefined();
    expect((await raw(fullPage, 'deflate')).headers['content-encoding']).toBeUndefined();
  });

  it.each(codings)('a full page, the root and the index revalidate with 304 and the %s ETag, also from another coding of the same document', async (coding) => {
    for (const url of [fullPage, root, index]) {
      const first = await raw(url, coding);
      const etag = String(first.headers.etag);
      const again = await raw(url, coding, { 'if-none-match': etag });
      expect(again.status).toBe(304);
      expect(again.bytes.length).toBe(0);
      expect(again.headers.etag).toBe(etag);
      expect(again.headers.vary).toBe('Accept, Accept-Encoding');
      // A cache holding another coding of the same document may revalidate for this one.
      const other = codings.find((candidate) => candidate !== coding)!;
      const sibling = await raw(url, other, { 'if-none-match': etag });
      expect(sibling.status).toBe(304);
      expect(sibling.headers.etag).not.toBe(etag);
    }
  });

  it("the open page's tags in every coding stop matching with the next element", async () => {
    const before = await raw(openPage, 'gzip');
    await running.push(undefined, new Date(startMs + 46_000));
    const after = await raw(openPage, 'gzip', { 'if-none-match': String(before.headers.etag) });
    expect(after.status).toBe(200);
    expect(gunzipSync(after.bytes).toString('utf8')).toContain(`-46>`);
  });

  it('406 problem+json when every coding is refused', async () => {
    const response = await fetch(fullPage, { headers: { 'accept-encoding': 'br;q=0, gzip;q=0, identity;q=0' } });
    expect(response.status).toBe(406);
    expect((await readProblem(response)).code).toBe('PUB_ERR_NOT_ACCEPTABLE');
  });
});
