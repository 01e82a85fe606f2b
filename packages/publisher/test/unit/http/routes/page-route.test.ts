import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPageAssets, prefersHtml } from '../../../../src/http/routes/page-route.js';

describe('prefersHtml', () => {
  it('is true for a browser navigation, false for RDF clients, */* and no header', () => {
    expect(prefersHtml('text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8')).toBe(true);
    expect(prefersHtml('text/html')).toBe(true);
    expect(prefersHtml(undefined)).toBe(false);
    expect(prefersHtml('*/*')).toBe(false);
    expect(prefersHtml('text/turtle')).toBe(false);
    expect(prefersHtml('text/turtle, text/html;q=0.5')).toBe(false);
    // A tie goes to RDF: the IRI is a data resource first.
    expect(prefersHtml('text/turtle, text/html')).toBe(false);
    // Parameters on the RDF type keep it an RDF request (issue 28).
    expect(prefersHtml('application/ld+json;profile="http://www.w3.org/ns/json-ld#compacted", text/html;q=0.9')).toBe(false);
    expect(prefersHtml('text/turtle;charset=utf-8, text/html;q=0.9')).toBe(false);
  });
});

describe('loadPageAssets', () => {
  it('is undefined when the page is not built', async () => {
    expect(await loadPageAssets(mkdtempSync(join(tmpdir(), 'page-')))).toBeUndefined();
  });

  it('reads the page and compresses a file that was not precompressed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'page-'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>x</title>');
    writeFileSync(join(dir, 'page-ABC.js'), 'console.log(1)'.repeat(50));
    const assets = (await loadPageAssets(dir))!;
    expect(assets.html.contentType).toMatch(/^text\/html/);
    const script = assets.files.get('page-ABC.js')!;
    expect(script.contentType).toMatch(/^text\/javascript/);
    expect(script.bodies.br.length).toBeLessThan(script.bodies.identity.length);
  });
});

describe('a publisher whose page is not built', () => {
  it('answers browsers 503 problem+json PUB_ERR_PAGE_NOT_BUILT, and RDF clients as ever', async () => {
    const Fastify = (await import('fastify')).default;
    const { registerProblemHandlers } = await import('../../../../src/http/problem.js');
    const { registerPage } = await import('../../../../src/http/routes/page-route.js');
    const app = Fastify();
    registerProblemHandlers(app, 10);
    const context = { hubs: new Map([['parking', {}]]) } as unknown as Parameters<typeof registerPage>[1];
    await registerPage(app, context, mkdtempSync(join(tmpdir(), 'page-')));
    app.get('/streams/:id', () => 'rdf');
    const html = 'text/html,application/xhtml+xml,*/*;q=0.8';
    for (const url of ['/', '/streams/parking']) {
      const response = await app.inject({ url, headers: { accept: html } });
      expect(response.statusCode, url).toBe(503);
      expect(response.headers['content-type'], url).toMatch(/^application\/problem\+json/);
      expect(response.json(), url).toMatchObject({ code: 'PUB_ERR_PAGE_NOT_BUILT' });
    }
    expect((await app.inject({ url: '/streams/parking', headers: { accept: 'text/turtle' } })).body).toBe('rdf');
    await app.close();
  });
});
