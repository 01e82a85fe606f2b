import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repositoryRoot } from '../../../src/process/publisher-process.js';
import { deployedEnvironment } from '../../../src/reliability/restartable-publisher.js';

describe('RestartablePublisher environment', () => {
  it('is the environment the Docker image sets', () => {
    const dockerfile = readFileSync(join(repositoryRoot, 'docker/Dockerfile'), 'utf8');
    // The runtime stage is the last FROM; its ENV instructions, continuation lines joined.
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM ')).replace(/\\\n\s*/g, ' ');
    const set = [...runtime.matchAll(/^ENV (.+)$/gm)].flatMap(([, pairs]) => pairs!.trim().split(/\s+/));
    expect(Object.keys(deployedEnvironment).length).toBeGreaterThan(0);
    for (const [name, value] of Object.entries(deployedEnvironment)) expect(set).toContain(`${name}=${value}`);
  });
});
