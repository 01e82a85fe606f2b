import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { elementFrame, encodedFrame, EventStreamEncoder } from '../../../src/render/event-stream-encoder.js';
import type { GzipFragment } from '../../../src/render/gzip-fragment.js';
import { loggedElement } from '../../support/logged-element.js';

describe('EventStreamEncoder', () => {
  it('identity: frames pass unchanged, and the stream has no trailer', () => {
    const encoder = new EventStreamEncoder('identity');
    const element = loggedElement(3);
    expect(encoder.start(': ok\n\n').toString()).toBe(': ok\n\n');
    const frame = elementFrame(element, 'turtle', 'identity');
    expect(frame.toString()).toBe('id: testepoch-3\ndata: turtle element 3\n\n');
    expect(encoder.encode(frame)).toBe(frame);
    expect(encoder.encode(encodedFrame(':\n\n'))).toEqual(Buffer.from(':\n\n'));
    expect(encoder.end()).toBeUndefined();
    expect(encoder.end('retry: 5\n\n')?.toString()).toBe('retry: 5\n\n');
  });

  it('gzip: start, shared element frames, own messages and the end make one valid gzip body', () => {
    const encoder = new EventStreamEncoder('gzip');
    const [one, two] = [loggedElement(1), loggedElement(2)];
    const heartbeat = encodedFrame(':\n\n');
    const body = Buffer.concat([
      encoder.start(': ok\nretry: 2000\n\n'),
      encoder.encode(elementFrame(one, 'nquads', 'gzip')),
      encoder.encode(heartbeat),
      encoder.encode('event: gap\ndata: {}\n\n'),
      encoder.encode(elementFrame(two, 'nquads', 'gzip')),
      encoder.end('retry: 9000\n\n')!,
    ]);
    expect(gunzipSync(body).toString()).toBe(
      `: ok\nretry: 2000\n\nid: testepoch-1\ndata: nquads element 1\n\n:\n\nevent: gap\ndata: {}\n\nid: testepoch-2\ndata: nquads element 2\n\nretry: 9000\n\n`,
    );
  });

  it('compresses an element once per format: every gzip subscriber gets the very same fragment', () => {
    const element = loggedElement(7);
    const fragment = elementFrame(element, 'turtle', 'gzip') as GzipFragment;
    expect(elementFrame(element, 'turtle', 'gzip')).toBe(fragment);
    expect(elementFrame(element, 'jsonld', 'gzip')).not.toBe(fragment);
    expect(elementFrame(element, 'turtle', 'identity')).toBe(elementFrame(element, 'turtle', 'identity'));
    const [a, b] = [new EventStreamEncoder('gzip'), new EventStreamEncoder('gzip')];
    expect(a.encode(fragment)).toBe(b.encode(fragment));
  });

  it('refuses a frame of the other encoding rather than corrupt the stream', () => {
    const element = loggedElement(1);
    expect(() => new EventStreamEncoder('gzip').encode(elementFrame(element, 'turtle', 'identity'))).toThrow(TypeError);
    expect(() => new EventStreamEncoder('identity').encode(elementFrame(element, 'turtle', 'gzip'))).toThrow(TypeError);
  });
});
