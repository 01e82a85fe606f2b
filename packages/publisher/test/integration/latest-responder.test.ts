import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { LatestResponder } from '../../src/http/latest-responder.js';
import { NegotiationCache } from '../../src/render/headers/negotiate.js';
import { type RunningPublisher, startPublisher } from '../support/publisher-fixture.js';

describe('LatestResponder', () => {
  const generatedAt = new Date(Date.UTC(2026, 10, 22, 16, 0, 0, 0));
  const t0 = generatedAt.getTime();
  const responder = new LatestResponder(loadConfig({ argv: ['--max-long-poll-wait-seconds', '30'] }), new NegotiationCache(10));
  let running: RunningPublisher;
  let etag: string;

  beforeAll(async () => {
    running = await startPublisher();
    await running.push(undefined, generatedAt);
    etag = `"${running.hub.log.epoch}-1-turtle"`;
  });
  afterAll(() => running.close());

  it('answers 200 with the pre-rendered body and complete headers', () => {
    const outcome = responder.respond(running.hub, { accept: 'text/turtle' }, t0 + 1500);
    expect(outcome).toMatchObject({ kind: 'send', status: 200 });
    if (outcome.kind !== 'send') throw new Error();
    expect(outcome.body).toBe(running.hub.latest!.bodies.turtle.identity);
    expect(outcome.headers).toMatchObject({
      'cache-control': 'public, max-age=3',
      etag,
      'content-length': String(outcome.body!.length),
      'access-control-allow-origin': '*',
    });
  });

  it('shares one frozen headers object while freshness is unchanged, and rebuilds it when it changes', () => {
    const first = responder.respond(running.hub, { accept: 'text/turtle' }, t0 + 1100);
    const same = responder.respond(running.hub, { accept: 'text/turtle' }, t0 + 1900);
    const later = responder.respond(running.hub, { accept: 'text/turtle' }, t0 + 2100);
    if (first.kind !== 'send' || same.kind !== 'send' || later.kind !== 'send') throw new Error();
    expect(same.headers).toBe(first.headers);
    expect(Object.isFrozen(first.headers)).toBe(true);
    expect(later.headers['cache-control']).toBe('public, max-age=2');
  });

  it('answers 304 without content headers when If-None-Match hits', () => {
    const outcome = responder.respond(running.hub, { accept: 'text/turtle', 'if-none-match': etag }, t0 + 1000);
    if (outcome.kind !== 'send') throw new Error();
    expect(outcome.status).toBe(304);
    expect(outcome.body).toBeUndefined();
    expect(outcome.headers['content-length']).toBeUndefined();
    expect(outcome.headers['content-type']).toBeUndefined();
    expect(outcome.headers.etag).toBe(etag);
  });

  it('asks to wait, capped at maxLongPollWaitSeconds, only when the client has the latest element', () => {
    const request = { accept: 'text/turtle', 'if-none-match': etag, prefer: 'wait=100' };
    expect(responder.respond(running.hub, request, t0)).toEqual({ kind: 'wait', seconds: 30 });
    expect(responder.respond(running.hub, request, t0, false)).toMatchObject({ status: 304 });
    expect(responder.respond(running.hub, { ...request, 'if-none-match': '"other"' }, t0)).toMatchObject({ status: 200 });
  });

  it('serves identity only if compression failed for the element', () => {
    const hub = { definition: running.hub.definition, log: running.hub.log, latest: { ...running.hub.latest!, compressed: false } };
    const outcome = responder.respond(hub as never, { accept: 'text/turtle', 'accept-encoding': 'br' }, t0 + 1500);
    if (outcome.kind !== 'send') throw new Error();
    expect(outcome.headers['content-encoding']).toBeUndefined();
    expect(outcome.body).toBe(running.hub.latest!.bodies.turtle.identity);
    expect(() => responder.respond(hub as never, { 'accept-encoding': 'br, identity;q=0' }, t0)).toThrow(
      expect.objectContaining({ code: 'PUB_ERR_NOT_ACCEPTABLE' }),
    );
  });

  it('throws catalogued errors for unacceptable requests', () => {
    expect(() => responder.respond(running.hub, { accept: 'text/html' }, t0)).toThrow(
      expect.objectContaining({ code: 'PUB_ERR_NOT_ACCEPTABLE' }),
    );
    expect(() => responder.respond(running.hub, { 'accept-encoding': 'identity;q=0' }, t0)).toThrow(
      expect.objectContaining({ code: 'PUB_ERR_NOT_ACCEPTABLE' }),
    );
  });
});
