import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SparqlEndpointFetcher } from 'fetch-sparql-endpoint';
import { Parser } from 'n3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPublisher, type TestPublisher } from '../../src/testing.js';

const SOSA = 'PREFIX sosa: <http://www.w3.org/ns/sosa/>';
const averageFree = `${SOSA}
SELECT (COUNT(?observation) AS ?observations) (AVG(?free) AS ?averageFree)
WHERE { ?observation a sosa:Observation; sosa:hasSimpleResult ?free }`;
const hourMs = 3_600_000;

let running: TestPublisher;
let endpoint: string;

/** Three elements: one of two hours ago, then two of now (the latest holds 30 and 50). */
beforeAll(async () => {
  running = await startTestPublisher();
  endpoint = `${running.streamUrl}/sparql`;
  await running.push([1, 3], new Date(Date.now() - 2 * hourMs));
  await running.push([10, 20]);
  await running.push([30, 50]);
});
afterAll(() => running.close());

const get = (query: string, params = '', headers: Record<string, string> = {}) =>
  fetch(`${endpoint}?query=${encodeURIComponent(query)}${params}`, { headers });
const problem = async (response: Response) => {
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  return (await response.json()) as { code: string; status: number; detail?: string; line?: number; column?: number };
};
const averageOf = async (response: Response) => {
  expect(response.status).toBe(200);
  const body = (await response.json()) as { results: { bindings: Array<Record<string, { value: string }>> } };
  const [row] = body.results.bindings;
  return { observations: Number(row?.observations?.value), averageFree: Number(row?.averageFree?.value) };
};

describe('a SPARQL client nobody here wrote (fetch-sparql-endpoint) against a real publisher', () => {
  const fetcher = new SparqlEndpointFetcher();

  it('runs a SELECT over the latest element', async () => {
    const rows: Array<Record<string, { value: string }>> = [];
    for await (const row of await fetcher.fetchBindings(endpoint, averageFree)) rows.push(row as unknown as Record<string, { value: string }>);
    expect(rows.map((row) => [Number(row.observations?.value), Number(row.averageFree?.value)])).toEqual([[2, 40]]);
  });

  it('runs an ASK', async () => {
    expect(await fetcher.fetchAsk(endpoint, `${SOSA} ASK { ?o sosa:hasSimpleResult 50 }`)).toBe(true);
    expect(await fetcher.fetchAsk(endpoint, `${SOSA} ASK { ?o sosa:hasSimpleResult 10 }`)).toBe(false);
  });

  it('runs a CONSTRUCT', async () => {
    const triples: string[] = [];
    const query = `${SOSA} CONSTRUCT { ?o <urn:free> ?free } WHERE { ?o sosa:hasSimpleResult ?free }`;
    for await (const triple of await fetcher.fetchTriples(endpoint, query)) triples.push((triple as { object: { value: string } }).object.value);
    expect(triples.sort()).toEqual(['30', '50']);
  });

  it('runs the same SELECT by GET', async () => {
    const byGet = new SparqlEndpointFetcher({ method: 'GET' });
    const rows: Array<Record<string, { value: string }>> = [];
    for await (const row of await byGet.fetchBindings(endpoint, averageFree)) rows.push(row as unknown as Record<string, { value: string }>);
    expect(rows.map((row) => Number(row.observations?.value))).toEqual([2]);
  });
});

describe('the window a query ranges over', () => {
  it('is the latest element by default', async () => {
    expect(await averageOf(await get(averageFree))).toEqual({ observations: 2, averageFree: 40 });
  });

  it('is the last N elements with elements=N, each its own named graph', async () => {
    expect(await averageOf(await get(averageFree, '&elements=2'))).toEqual({ observations: 4, averageFree: 27.5 });
    expect(await averageOf(await get(averageFree, '&elements=100'))).toEqual({ observations: 6, averageFree: 19 });
    const graphs = await get('SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }', '&elements=3', { accept: 'text/csv' });
    expect((await graphs.text()).trim().split(/\r?\n/).slice(1)).toHaveLength(3);
  });

  it('is the elements generated within the last duration with duration=', async () => {
    expect(await averageOf(await get(averageFree, '&duration=PT1H'))).toEqual({ observations: 4, averageFree: 27.5 });
    expect(await averageOf(await get(averageFree, '&duration=P1D'))).toEqual({ observations: 6, averageFree: 19 });
  });

  it('sees each element generatedAt in the default graph', async () => {
    const response = await get('PREFIX prov: <http://www.w3.org/ns/prov#> SELECT ?g ?at WHERE { ?g prov:generatedAtTime ?at }', '&elements=3');
    const body = (await response.json()) as { results: { bindings: unknown[] } };
    expect(body.results.bindings).toHaveLength(3);
  });

  it('refuses a malformed window, and both parameters at once', async () => {
    for (const params of ['&elements=0', '&elements=two', '&duration=P1M', '&duration=PT0S', '&elements=2&duration=PT1H']) {
      const response = await get(averageFree, params);
      expect(response.status, params).toBe(400);
      expect((await problem(response)).code, params).toBe('PUB_ERR_SPARQL_BAD_REQUEST');
    }
  });
});

describe('the SPARQL 1.1 Protocol request forms', () => {
  it('takes a form (application/x-www-form-urlencoded) with query= and the window in the form', async () => {
    const body = new URLSearchParams({ query: averageFree, elements: '2' });
    expect(await averageOf(await fetch(endpoint, { method: 'POST', body }))).toEqual({ observations: 4, averageFree: 27.5 });
  });

  it('takes an application/sparql-query body, with the window in the URL', async () => {
    const response = await fetch(`${endpoint}?elements=2`, { method: 'POST', body: averageFree, headers: { 'content-type': 'application/sparql-query; charset=utf-8' } });
    expect(await averageOf(response)).toEqual({ observations: 4, averageFree: 27.5 });
  });

  it('refuses a POST of another media type (415), and a form without query= (400)', async () => {
    const plain = await fetch(endpoint, { method: 'POST', body: averageFree, headers: { 'content-type': 'text/plain' } });
    expect([plain.status, (await problem(plain)).code]).toEqual([415, 'PUB_ERR_UNSUPPORTED_MEDIA_TYPE']);
    const empty = await fetch(endpoint, { method: 'POST', body: new URLSearchParams({ elements: '2' }) });
    expect([empty.status, (await problem(empty)).code]).toEqual([400, 'PUB_ERR_SPARQL_BAD_REQUEST']);
    const twice = await fetch(`${endpoint}?query=ASK{}&query=ASK{}`);
    expect([twice.status, (await problem(twice)).code]).toEqual([400, 'PUB_ERR_SPARQL_BAD_REQUEST']);
  });

  it('refuses SPARQL Update in every form, and changes nothing', async () => {
    const insert = 'INSERT DATA { <http://example.org/s> <http://example.org/p> "x" }';
    const answers = [
      await get(insert),
      await fetch(endpoint, { method: 'POST', body: new URLSearchParams({ update: insert }) }),
      await fetch(endpoint, { method: 'POST', body: insert, headers: { 'content-type': 'application/sparql-update' } }),
      await fetch(endpoint, { method: 'POST', body: insert, headers: { 'content-type': 'application/sparql-query' } }),
    ];
    for (const response of answers) expect([response.status, (await problem(response)).code]).toEqual([403, 'PUB_ERR_SPARQL_UPDATE_REFUSED']);
    const ask = await get('ASK { <http://example.org/s> ?p ?o }');
    expect(((await ask.json()) as { boolean: boolean }).boolean).toBe(false);
  });

  it('refuses a dataset named by default-graph-uri or named-graph-uri', async () => {
    const response = await get(averageFree, '&default-graph-uri=http%3A%2F%2Fexample.org%2Fg');
    expect([response.status, (await problem(response)).code]).toEqual([400, 'PUB_ERR_SPARQL_BAD_REQUEST']);
  });

  it('answers a GET without a query with its service description, and the descriptor links it', async () => {
    const description = await fetch(endpoint, { headers: { accept: 'application/n-triples' } });
    expect(description.headers.get('content-type')).toMatch(/^application\/n-triples/);
    const quads = new Parser({ format: 'application/n-triples' }).parse(await description.text());
    const sd = 'http://www.w3.org/ns/sparql-service-description#';
    const objectsOf = (predicate: string) => quads.filter((q) => q.predicate.value === predicate).map((q) => q.object.value);
    expect(objectsOf(`${sd}endpoint`)).toEqual([endpoint]);
    expect(objectsOf(`${sd}supportedLanguage`)).toEqual([`${sd}SPARQL11Query`]);
    expect(objectsOf(`${sd}resultFormat`)).toContain('http://www.w3.org/ns/formats/SPARQL_Results_JSON');
    const descriptor = await (await fetch(running.streamUrl, { headers: { accept: 'application/n-triples' } })).text();
    expect(descriptor).toContain(`<${running.streamUrl}> <http://rdfs.org/ns/void#sparqlEndpoint> <${endpoint}> .`);
    expect(descriptor).toContain(`<${running.streamUrl}#sparql> <${sd}endpoint> <${endpoint}> .`);
  });
});

describe('result media types', () => {
  const select = `${SOSA} SELECT ?free WHERE { ?o sosa:hasSimpleResult ?free } ORDER BY ?free`;
  const construct = `${SOSA} CONSTRUCT { ?o sosa:hasSimpleResult ?free } WHERE { ?o sosa:hasSimpleResult ?free }`;

  it('writes SELECT results as SPARQL JSON (the default), XML, CSV and TSV', async () => {
    const json = await get(select);
    expect(json.headers.get('content-type')).toBe('application/sparql-results+json; charset=utf-8');
    expect(json.headers.get('vary')).toMatch(/Accept/);
    const xml = await get(select, '', { accept: 'application/sparql-results+xml' });
    expect(await xml.text()).toMatch(/<sparql xmlns="http:\/\/www.w3.org\/2005\/sparql-results#"[\s\S]*<binding name="free">/);
    expect(await (await get(select, '', { accept: 'text/csv' })).text()).toMatch(/^free\r?\n30\r?\n50\r?\n$/);
    const tsv = await get(select, '', { accept: 'text/tab-separated-values' });
    expect(tsv.headers.get('content-type')).toMatch(/^text\/tab-separated-values/);
    expect((await tsv.text()).split('\n')).toEqual(['?free', '"30"^^<http://www.w3.org/2001/XMLSchema#integer>', '"50"^^<http://www.w3.org/2001/XMLSchema#integer>', '']);
  });

  it('writes an ASK result as SPARQL JSON and XML', async () => {
    const ask = `${SOSA} ASK { ?o sosa:hasSimpleResult 50 }`;
    expect(await (await get(ask)).json()).toMatchObject({ boolean: true });
    expect(await (await get(ask, '', { accept: 'application/sparql-results+xml' })).text()).toContain('<boolean>true</boolean>');
  });

  it('writes CONSTRUCT results as Turtle (the default), N-Triples, N-Quads and JSON-LD', async () => {
    for (const [accept, contentType] of [
      [undefined, 'text/turtle'],
      ['application/n-triples', 'application/n-triples'],
      ['application/n-quads', 'application/n-quads'],
      ['application/ld+json', 'application/ld+json'],
    ] as const) {
      const response = await get(construct, '', accept === undefined ? {} : { accept });
      expect(response.headers.get('content-type'), accept).toMatch(new RegExp(`^${contentType.replace('+', '\\+')}`));
      const text = await response.text();
      const values = accept === 'application/ld+json' ? text.match(/\b(30|50)\b/g) : new Parser({ format: contentType }).parse(text).map((q) => q.object.value);
      expect([...(values ?? [])].sort(), accept).toEqual(['30', '50']);
    }
  });

  it('answers 406 problem+json when Accept takes none of them', async () => {
    const none = await get(select, '', { accept: 'image/png' });
    expect([none.status, (await problem(none)).code]).toEqual([406, 'PUB_ERR_NOT_ACCEPTABLE']);
    // CSV holds rows, not a boolean.
    const askAsCsv = await get('ASK {}', '', { accept: 'text/csv' });
    expect([askAsCsv.status, (await problem(askAsCsv)).code]).toEqual([406, 'PUB_ERR_NOT_ACCEPTABLE']);
    const constructAsJson = await get(construct, '', { accept: 'application/sparql-results+json' });
    expect([constructAsJson.status, (await problem(constructAsJson)).code]).toEqual([406, 'PUB_ERR_NOT_ACCEPTABLE']);
  });
});

describe('syntax errors', () => {
  it('are 400 problem+json with the line and column of the error', async () => {
    const response = await get(`${SOSA}\nSELECT ?free WHERE {\n  ?o sosa:hasSimpleResult ?free .\n  FILTER(?free > ) }`);
    const body = await problem(response);
    expect([response.status, body.code, body.line, body.column]).toEqual([400, 'PUB_ERR_SPARQL_SYNTAX', 4, 18]);
    expect(body.detail).toMatch(/^Line 4, column 18: /);
  });

  it('place an undeclared prefix at its first use, and an early end at the end of the query', async () => {
    const prefix = await problem(await get('SELECT * WHERE {\n  ?o  ex:p ?v }'));
    expect([prefix.code, prefix.line, prefix.column]).toEqual(['PUB_ERR_SPARQL_SYNTAX', 2, 7]);
    const early = await problem(await get('SELECT * WHERE {\n  ?s ?p ?o'));
    expect([early.code, early.line, early.column]).toEqual(['PUB_ERR_SPARQL_SYNTAX', 2, 11]);
  });

  it('are told from what the endpoint does not evaluate: SERVICE (422); neither it nor FROM <url> fetches anything (no request forgery)', async () => {
    let requests = 0;
    const upstream = createServer((_request, response) => {
      requests++;
      response.end();
    });
    upstream.listen(0, '127.0.0.1');
    await once(upstream, 'listening');
    const { port } = upstream.address() as AddressInfo;
    try {
      const service = await get(`SELECT * WHERE { SERVICE <http://127.0.0.1:${port}/sparql> { ?s ?p ?o } }`);
      const body = await problem(service);
      expect([service.status, body.code]).toEqual([422, 'PUB_ERR_SPARQL_UNSUPPORTED']);
      expect(body.detail).toMatch(/SERVICE/);
      // FROM names a graph of the dataset: one the window lacks holds nothing.
      const from = await get(`SELECT * FROM <http://127.0.0.1:${port}/data> WHERE { ?s ?p ?o }`);
      expect(((await from.json()) as { results: { bindings: unknown[] } }).results.bindings).toEqual([]);
      expect(requests).toBe(0);
    } finally {
      upstream.close();
    }
  });
});

describe('CORS, for browser tools (YASGUI)', () => {
  it('lets a script of any origin read results', async () => {
    const response = await get('ASK {}', '', { origin: 'https://yasgui.example' });
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('grants the preflight of a POST with Content-Type: application/sparql-query', async () => {
    const response = await fetch(endpoint, {
      method: 'OPTIONS',
      headers: { origin: 'https://yasgui.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-methods')).toMatch(/POST/);
    expect(response.headers.get('access-control-allow-headers')).toMatch(/Content-Type/i);
  });
});
