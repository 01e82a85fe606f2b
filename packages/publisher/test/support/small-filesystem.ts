import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A real file system of `sizeKiB` (tmpfs), mounted on a fresh folder, so that a test meets the
 * kernel's own ENOSPC rather than a simulated one. Needs root (as CI and the dev machines run).
 */
export function mountSmallFilesystem(sizeKiB: number, options: { readonly readOnly?: boolean } = {}): { path: string; unmount(): void } {
  const path = mkdtempSync(join(tmpdir(), 'small-fs-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKiB}k${options.readOnly ? ',ro' : ''}`, 'tmpfs', path]);
  return {
    path,
    unmount() {
      execFileSync('umount', ['-l', path]);
      rmSync(path, { recursive: true, force: true });
    },
  };
}
