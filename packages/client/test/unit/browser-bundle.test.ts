import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

describe('the browser entry point', () => {
  it('bundles for the browser with nothing Node-only in it', async () => {
    const result = await build({
      entryPoints: [new URL('../../src/index.ts', import.meta.url).pathname],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      metafile: true,
      logLevel: 'silent',
      outfile: 'rdf-stream-client.js',
    });
    expect(result.errors).toEqual([]);
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.filter((input) => input.startsWith('node:') || /\/src\/cli\.ts$/.test(input))).toEqual([]);
    const output = result.outputFiles[0]!.text;
    expect(output).not.toMatch(/\bfrom\s*["']node:|require\(["']node:/);
    // What a page needs is in it: the transports, the decoders and the query engine.
    expect(inputs.some((input) => input.includes('eventsource-parser'))).toBe(true);
    expect(inputs.some((input) => input.includes('@comunica'))).toBe(true);
  }, 60_000);
});
