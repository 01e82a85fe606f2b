import { afterEach, describe, expect, it } from 'vitest';
import { startTestPublisher, type TestPublisher } from '../../src/testing.js';

/** Every triple with every triple with every triple: long enough for any time limit below. */
const crossProduct = 'SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }';
const dayMs = 86_400_000;

let running: TestPublisher | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

async function start(flags: string[]): Promise<{ publisher: TestPublisher; endpoint: string }> {
  running = await startTestPublisher({ flags });
  return { publisher: running, endpoint: `${running.streamUrl}/sparql` };
}
const get = (endpoint: string, query: string, params = '') => fetch(`${endpoint}?query=${encodeURIComponent(query)}${params}`);
const codeOf = async (response: Response) => ((await response.json()) as { code: string }).code;
const rowsOf = async (response: Response) => ((await response.json()) as { results: { bindings: unknown[] } }).results.bindings.length;

describe('sparqlTimeoutMs', () => {
  it('stops a query that runs longer (503 PUB_ERR_SPARQL_TIMEOUT), and the next query runs in a new thread', async () => {
    const { publisher, endpoint } = await start(['--sparql-timeout-ms', '300']);
    await publisher.push(Array.from({ length: 20 }, (_, index) => index));
    // The first query loads the engine (not counted against the limit).
    expect((await get(endpoint, 'ASK {}')).status).toBe(200);
    const slow = await get(endpoint, crossProduct);
    expect(slow.status).toBe(503);
    expect(await slow.json()).toMatchObject({ code: 'PUB_ERR_SPARQL_TIMEOUT', timeoutMs: 300 });
    const next = await get(endpoint, 'SELECT ?o WHERE { ?o <http://www.w3.org/ns/sosa/hasSimpleResult> ?v }');
    expect([next.status, await rowsOf(next)]).toEqual([200, 20]);
  });
});

describe('sparqlMaxQueued', () => {
  it('queues that many queries behind the running one, and refuses the next (503 PUB_ERR_SPARQL_BUSY, Retry-After)', async () => {
    const { publisher, endpoint } = await start(['--sparql-timeout-ms', '500', '--sparql-max-queued', '1']);
    await publisher.push(Array.from({ length: 20 }, (_, index) => index));
    expect((await get(endpoint, 'ASK {}')).status).toBe(200);
    const answers = await Promise.all([get(endpoint, crossProduct), get(endpoint, crossProduct), get(endpoint, crossProduct)]);
    const codes = await Promise.all(answers.map(codeOf));
    expect([...codes].sort()).toEqual(['PUB_ERR_SPARQL_BUSY', 'PUB_ERR_SPARQL_TIMEOUT', 'PUB_ERR_SPARQL_TIMEOUT']);
    const busy = answers.find((_, index) => codes[index] === 'PUB_ERR_SPARQL_BUSY');
    expect(busy?.status).toBe(503);
    expect(busy?.headers.get('retry-after')).toBe('1');
  });
});

describe('sparqlMaxResults', () => {
  it('returns that many rows or triples, and refuses one more (422 PUB_ERR_SPARQL_TOO_MANY_RESULTS)', async () => {
    const { publisher, endpoint } = await start(['--sparql-max-results', '3']);
    await publisher.push([1, 2, 3]);
    expect(await rowsOf(await get(endpoint, 'SELECT ?x WHERE { VALUES ?x { 1 2 3 } }'))).toBe(3);
    const tooMany = await get(endpoint, 'SELECT ?x WHERE { VALUES ?x { 1 2 3 4 } }');
    expect(tooMany.status).toBe(422);
    expect(await tooMany.json()).toMatchObject({ code: 'PUB_ERR_SPARQL_TOO_MANY_RESULTS', maxResults: 3 });
    const construct = (values: string) => get(endpoint, `CONSTRUCT { ?x <urn:p> 1 } WHERE { VALUES ?x { ${values} } }`);
    expect((await construct('<urn:a> <urn:b> <urn:c>')).status).toBe(200);
    expect(await codeOf(await construct('<urn:a> <urn:b> <urn:c> <urn:d>'))).toBe('PUB_ERR_SPARQL_TOO_MANY_RESULTS');
  });
});

describe('sparqlMaxElements', () => {
  it('takes a window of that many elements, and refuses a larger one by count or duration (400 PUB_ERR_SPARQL_WINDOW_TOO_LARGE)', async () => {
    const { publisher, endpoint } = await start(['--sparql-max-elements', '3']);
    await publisher.push([1], new Date(Date.now() - 2 * dayMs));
    for (const value of [2, 3, 4]) await publisher.push([value]);
    const count = 'SELECT (COUNT(?v) AS ?n) WHERE { ?o <http://www.w3.org/ns/sosa/hasSimpleResult> ?v }';
    const countOf = async (response: Response) =>
      Number(((await response.json()) as { results: { bindings: Array<{ n: { value: string } }> } }).results.bindings[0]?.n.value);
    expect(await countOf(await get(endpoint, count, '&elements=3'))).toBe(3);
    expect(await countOf(await get(endpoint, count, '&duration=P1D'))).toBe(3);
    for (const params of ['&elements=4', '&duration=P3D']) {
      const refused = await get(endpoint, count, params);
      expect(refused.status, params).toBe(400);
      expect(await refused.json(), params).toMatchObject({ code: 'PUB_ERR_SPARQL_WINDOW_TOO_LARGE', maxElements: 3 });
    }
  });
});

describe('sparqlMaxQueryBytes', () => {
  it('takes a query of that many bytes, by GET and POST, and refuses a longer one (413 PUB_ERR_SPARQL_QUERY_TOO_LARGE)', async () => {
    const { publisher, endpoint } = await start(['--sparql-max-query-bytes', '64']);
    await publisher.push([1]);
    const sized = (bytes: number) => `ASK {} #${'é'.repeat((bytes - 8) / 2)}`;
    expect(Buffer.byteLength(sized(64))).toBe(64);
    expect((await get(endpoint, sized(64))).status).toBe(200);
    const post = (query: string) => fetch(endpoint, { method: 'POST', body: query, headers: { 'content-type': 'application/sparql-query' } });
    expect((await post(sized(64))).status).toBe(200);
    for (const refused of [await get(endpoint, sized(66)), await post(sized(66))]) {
      expect(refused.status).toBe(413);
      expect(await refused.json()).toMatchObject({ code: 'PUB_ERR_SPARQL_QUERY_TOO_LARGE', maxQueryBytes: 64 });
    }
    // A body past three times the limit (room for percent-encoding) is not read at all.
    const huge = await post(`ASK {} #${'x'.repeat(3 * 64)}`);
    expect([huge.status, await codeOf(huge)]).toEqual([413, 'PUB_ERR_BODY_TOO_LARGE']);
  });
});
