import { describe, expect, it } from 'vitest';
import { type Execve, memoryReducerOption, PUBLISHER_NODE_OPTIONS, restartWithPublisherOptions } from '../../src/node-options.js';

/** An execve that records what it was asked instead of replacing the process. */
function recordingExecve() {
  const calls: Array<{ file: string; args: readonly string[] }> = [];
  const execve = ((file: string, args: readonly string[]) => {
    calls.push({ file, args });
  }) as unknown as Execve;
  return { execve, calls };
}

describe('memoryReducerOption', () => {
  it('reads every spelling V8 accepts, the last one deciding', () => {
    expect(memoryReducerOption([])).toBeUndefined();
    expect(memoryReducerOption(['--import', 'tsx'])).toBeUndefined();
    expect(memoryReducerOption(['--no-memory-reducer'])).toBe('off');
    expect(memoryReducerOption(['--nomemory-reducer'])).toBe('off');
    expect(memoryReducerOption(['--no-memory_reducer'])).toBe('off');
    expect(memoryReducerOption(['--memory-reducer'])).toBe('on');
    expect(memoryReducerOption(['--no-memory-reducer', '--memory-reducer'])).toBe('on');
    expect(memoryReducerOption(['--memory-reducer', '--no-memory-reducer'])).toBe('off');
    // Other flags of the reducer are not it.
    expect(memoryReducerOption(['--no-memory-reducer-for-small-heaps', '--trace-memory-reducer'])).toBeUndefined();
  });

  it('is off in this list of options, which every launcher gives', () => {
    expect(memoryReducerOption(PUBLISHER_NODE_OPTIONS)).toBe('off');
  });
});

describe('restartWithPublisherOptions', () => {
  it("starts node again with the publisher's options before node's own, then the script and its arguments", () => {
    const { execve, calls } = recordingExecve();
    restartWithPublisherOptions({ script: '/app/bin/rdf-stream-publisher.js', execPath: '/usr/bin/node', execArgv: ['--conditions=@rdf-stream/compiled'], args: ['--port', '9000'], execve, platform: 'linux' });
    expect(calls).toEqual([
      { file: '/usr/bin/node', args: ['/usr/bin/node', '--no-memory-reducer', '--conditions=@rdf-stream/compiled', '/app/bin/rdf-stream-publisher.js', '--port', '9000'] },
    ]);
  });

  it('keeps an operator’s own choice, and does nothing where node cannot replace its process', () => {
    const { execve, calls } = recordingExecve();
    const base = { script: '/app/bin/x.js', execPath: '/usr/bin/node', args: [], platform: 'linux' as const };
    restartWithPublisherOptions({ ...base, execArgv: ['--memory-reducer'], execve });
    restartWithPublisherOptions({ ...base, execArgv: ['--no-memory-reducer'], execve });
    restartWithPublisherOptions({ ...base, execArgv: [], execve, platform: 'win32' });
    restartWithPublisherOptions({ ...base, execArgv: [], execve: undefined });
    expect(calls).toEqual([]);
  });
});
