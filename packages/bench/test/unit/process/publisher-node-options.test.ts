import { PUBLISHER_NODE_OPTIONS as publishersOwn } from '@rdf-stream/publisher';
import { describe, expect, it } from 'vitest';
import { PUBLISHER_NODE_OPTIONS } from '../../../src/process/publisher-process.js';

describe('the publisher the benchmark starts', () => {
  it("runs with the node options every launcher of the publisher gives it (the bench's src may not import them)", () => {
    expect(PUBLISHER_NODE_OPTIONS).toEqual(publishersOwn);
  });
});
