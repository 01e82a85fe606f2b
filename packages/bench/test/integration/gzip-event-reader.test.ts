import { request } from 'node:http';
import { constants, createGunzip, deflateRawSync, gunzipSync, inflateRawSync } from 'node:zlib';
import { createParser } from 'eventsource-parser';
import { streamResources } from '@rdf-stream/protocol';
import { startTestPublisher, type TestPublisher } from '@rdf-stream/publisher/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GzipEventReader } from '../../src/fleet/gzip-event-reader.js';
import { GzipEventSplitter, SYNC_FLUSH_MARKER } from '../../src/fleet/gzip-event-splitter.js';
import { GzipFragmentTexts } from '../../src/fleet/gzip-fragment-texts.js';

/**
 * The publisher's own gzip event stream, read off a real socket: the compressed body as it came
 * (HTTP chunk framing removed by node:http), until three elements and a heartbeat have come.
 */
async function gzipStream(running: TestPublisher): Promise<{ chunks: Buffer[]; decoded: string; elements: number }> {
  const url = new URL(`${streamResources(running.streamUrl).events}?format=turtle`);
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { accept: 'text/event-stream', 'accept-encoding': 'gzip' } }, (res) => {
      expect(res.headers['content-encoding']).toBe('gzip');
      const chunks: Buffer[] = [];
      let decoded = '';
      let elements = 0;
      let heartbeats = 0;
      const parser = createParser({
        onEvent: () => {
          elements++;
          if (elements < 3) void running.push();
          finish();
        },
        onComment: (comment) => {
          if (comment === '') heartbeats++;
          finish();
        },
      });
      const finish = () => {
        if (elements < 3 || heartbeats < 1) return;
        req.destroy();
        resolve({ chunks, decoded, elements });
      };
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      const gunzip = res.pipe(createGunzip());
      gunzip.setEncoding('utf8');
      gunzip.on('data', (text: string) => {
        decoded += text;
        parser.feed(text);
      });
      void running.push();
    });
    req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
    req.end();
  });
}

/** The pieces a splitter finds in `body` delivered in chunks of `size` bytes. */
function split(body: Buffer, size: number): Buffer[] {
  const splitter = new GzipEventSplitter();
  const pieces: Buffer[] = [];
  for (let offset = 0; offset < body.length; offset += size) pieces.push(...splitter.push(body.subarray(offset, offset + size)));
  return pieces;
}

describe('finding events in the publisher\'s gzip event stream without inflating it', () => {
  let running: TestPublisher;
  let stream: Awaited<ReturnType<typeof gzipStream>>;
  let body: Buffer;
  beforeAll(async () => {
    running = await startTestPublisher({ flags: ['--heartbeat-ms', '1000'] });
    stream = await gzipStream(running);
    body = Buffer.concat(stream.chunks);
  });
  afterAll(() => running.close());

  it('ends every SSE message (preamble, elements, heartbeat) with a sync flush, so each chunk the server wrote ends with 00 00 ff ff', () => {
    for (const chunk of stream.chunks) expect([...chunk.subarray(-4)]).toEqual(SYNC_FLUSH_MARKER);
    // And the stream so far is a valid gzip stream that a real decoder reads as it comes.
    expect(gunzipSync(body, { finishFlush: constants.Z_SYNC_FLUSH }).toString('utf8')).toBe(stream.decoded);
  });

  it('cuts the body into pieces that each inflate alone to whole SSE messages, together to the decoded stream', () => {
    const pieces = split(body, body.length);
    expect(pieces).toHaveLength(stream.chunks.length);
    const texts = pieces.map((piece) => inflateRawSync(piece, { finishFlush: constants.Z_SYNC_FLUSH }).toString('utf8'));
    expect(texts.join('')).toBe(stream.decoded);
    for (const text of texts) expect(text.endsWith('\n\n'), JSON.stringify(text.slice(-40))).toBe(true);
    // The preamble, three elements and at least one heartbeat, each its own piece.
    expect(texts.filter((text) => text.includes('\ndata: ') || text.startsWith('data: ') || /^id: /m.test(text))).toHaveLength(3);
    expect(pieces.length).toBeGreaterThanOrEqual(5);
  });

  it('finds the same pieces whatever the chunking of the bytes (the marker and the gzip header split across chunks)', () => {
    const whole = split(body, body.length);
    for (const size of [1, 2, 3, 4, 5, 7, 11, 64, 1000]) expect(split(body, size), `chunks of ${size} bytes`).toEqual(whole);
    // The chunks node:http handed over, as a client gets them: one piece each.
    const splitter = new GzipEventSplitter();
    expect(stream.chunks.map((chunk) => splitter.push(chunk))).toEqual(whole.map((piece) => [piece]));
  });

  it('gives each client the text of its events from one inflation per distinct piece, shared by all clients', () => {
    const texts = new GzipFragmentTexts();
    const readers = [0, 1, 2].map(() => new GzipEventReader(texts, 1_000_000));
    const read = readers.map((reader) => stream.chunks.map((chunk) => reader.read(chunk)).filter((text) => text !== undefined).join(''));
    expect(read).toEqual([stream.decoded, stream.decoded, stream.decoded]);
    expect(texts.inflated).toBe(new Set(split(body, body.length).map((piece) => piece.toString('base64'))).size);
  });

  it('joins a piece cut after a marker inside compressed data to the next one, so the text stays whole', () => {
    const pieces = split(body, body.length);
    const element = pieces.find((piece) => /^id: /m.test(inflateRawSync(piece, { finishFlush: constants.Z_SYNC_FLUSH }).toString('utf8')))!;
    const elementText = inflateRawSync(element, { finishFlush: constants.Z_SYNC_FLUSH }).toString('utf8');
    // A stored block of 0 bytes in the middle of the piece: what a marker inside compressed data
    // looks like to the splitter (a byte-aligned 00 00 ff ff), made real by a sync flush there.
    const half = Buffer.from(elementText.slice(0, 100));
    const cutStream = Buffer.concat([
      deflateRawSync(half, { finishFlush: constants.Z_SYNC_FLUSH }),
      deflateRawSync(Buffer.from(elementText.slice(100)), { finishFlush: constants.Z_SYNC_FLUSH }),
    ]);
    const reader = new GzipEventReader(new GzipFragmentTexts(), 1_000_000);
    const header = stream.chunks[0]!.subarray(0, 10);
    expect(reader.read(header)).toBeUndefined();
    // Two pieces, the first of which is no whole event: held back, then given with the second, whole.
    expect(reader.read(cutStream)).toBe(elementText);
    // Delivered byte by byte, the same.
    const byteByByte = new GzipEventReader(new GzipFragmentTexts(), 1_000_000);
    const texts = [...Buffer.concat([header, cutStream])].map((byte) => byteByByte.read(Buffer.from([byte]))).filter((text) => text !== undefined);
    expect(texts).toEqual([elementText]);
  });
});
