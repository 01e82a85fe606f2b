import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { BROWSER_CLIENT_PATH } from '@rdf-stream/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPublisher, type TestPublisher } from '../../src/testing.js';

/** The browser client on a real socket, read from the folder the publisher is given (`pageAssetsDirectory`). */
const source = 'export const subscribe = (url) => url;\n';
let running: TestPublisher;

beforeAll(async () => {
  const directory = mkdtempSync(join(tmpdir(), 'client-file-'));
  const path = join(directory, BROWSER_CLIENT_PATH);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, source);
  running = await startTestPublisher({ pageAssetsDirectory: directory });
});
afterAll(() => running.close());

describe(`${BROWSER_CLIENT_PATH} for pages of other origins`, () => {
  it('may be imported by a module script of any origin (CORS), which the browser fetches in cors mode', async () => {
    const response = await fetch(`${running.url}${BROWSER_CLIENT_PATH}`, { headers: { origin: 'https://pages.example', 'accept-encoding': 'identity' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await response.text()).toBe(source);
  });

  it('is read from the folder given, while the live page, not built there, answers 503', async () => {
    const page = await fetch(running.streamUrl, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(503);
    expect(((await page.json()) as { code: string }).code).toBe('PUB_ERR_PAGE_NOT_BUILT');
  });
});
