import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { BROWSER_CLIENT_PATH } from '@rdf-stream/protocol';
// The client package's own build of its browser file: the publisher serves the very bytes npm ships.
import { bundleBrowserFile } from '../../../client/scripts/build-browser-file.js';

export interface BuiltClientFile {
  /** Its path in the page's folder, as the publisher serves it: `client/rdf-stream-live.js`. */
  readonly name: string;
  readonly bytes: number;
  readonly brotliBytes: number;
}

/**
 * Writes the client's browser file (`@rdf-stream/client/browser`) into the page's folder at the
 * path the publisher serves it under (`BROWSER_CLIENT_PATH`, `/client/rdf-stream-live.js`),
 * precompressed (`.br`, `.gz`) like the page's own files, so that a page of anyone's imports the
 * client from the publisher without a bundler. Its name is stable, not hashed: pages name it.
 */
export async function buildClientFile(outputDirectory: string): Promise<BuiltClientFile> {
  const file = await bundleBrowserFile();
  const name = BROWSER_CLIENT_PATH.slice(1);
  const path = join(outputDirectory, name);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, file.contents);
  writeFileSync(`${path}.br`, file.brotli);
  writeFileSync(`${path}.gz`, file.gzip);
  return { name, bytes: file.bytes, brotliBytes: file.brotli.length };
}
