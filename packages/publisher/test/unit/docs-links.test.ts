import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The repository's text must stand on its own: a clone has nothing beside it, so a reference to a
 * file outside it (a sibling folder, notes kept elsewhere) is a dead end for every reader, and a
 * relative link in the Markdown must reach a file, and a heading, that exist.
 */
const repositoryRoot = fileURLToPath(new URL('../../../../', import.meta.url));
const trackedFiles = execFileSync('git', ['ls-files', '-z'], { cwd: repositoryRoot, encoding: 'utf8' })
  .split('\0')
  .filter((path) => path !== '' && path !== 'pnpm-lock.yaml' && existsSync(join(repositoryRoot, path)));
const read = (path: string) => readFileSync(join(repositoryRoot, path), 'utf8');

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{Letter}\p{Number}\- _]/gu, '')
    .replace(/ /g, '-');

function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading] of markdown.replace(/```[\s\S]*?```/g, '').matchAll(/^#{1,6} (.+)$/gm)) {
    const anchor = anchorOf(heading!);
    const count = seen.get(anchor) ?? 0;
    anchors.add(count === 0 ? anchor : `${anchor}-${count}`);
    seen.set(anchor, count + 1);
  }
  return anchors;
}

describe('the repository stands on its own', () => {
  it('no tracked file refers to notes outside the repository', () => {
    // Escaped so that this file does not match itself.
    const outside = new RegExp(['\\.\\./shared', 'DESIGN\\.md', 'ECOSYSTEM\\.md', 'shared\\/reference'].join('|'));
    const offending = trackedFiles.filter((path) => outside.test(read(path)));
    expect(offending).toEqual([]);
  });

  it("every relative link of the Markdown files reaches a tracked file, and a heading of it when it names one", () => {
    const broken: string[] = [];
    for (const path of trackedFiles.filter((file) => file.endsWith('.md'))) {
      const text = read(path).replace(/```[\s\S]*?```/g, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target!)) continue;
        const [file, anchor] = target!.split('#') as [string, string | undefined];
        const linked = file === '' ? path : normalize(join(dirname(path), file));
        if (!existsSync(join(repositoryRoot, linked))) {
          broken.push(`${path}: ${target} (no such file)`);
        } else if (anchor !== undefined && linked.endsWith('.md') && !anchorsOf(read(linked)).has(anchor)) {
          broken.push(`${path}: ${target} (no such heading)`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});
