/// <reference lib="webworker" />
import { ContinuousQuery, runContinuousQuery, type TransportName } from '@rdf-stream/client';
import { type QueryCommand, type QueryReport, resultView } from './query-messages.js';

/**
 * The live page's continuous query, off the page's main thread: this worker subscribes to the
 * streams the query reads, fills its windows and evaluates it with Comunica, and posts each
 * result back as rows of strings. The page's main thread then only renders: a query evaluation
 * (tens to hundreds of milliseconds, more on the first) no longer holds up the updates it shows,
 * nor the latency it measures on them.
 */
declare const self: DedicatedWorkerGlobalScope;

let current: { readonly run: number; readonly controller: AbortController } | undefined;

const report = (message: QueryReport) => self.postMessage(message);

self.addEventListener('message', (event: MessageEvent<QueryCommand>) => {
  const command = event.data;
  current?.controller.abort();
  current = undefined;
  if (command.type === 'start') void run(command.run, command.query, command.transport);
});

async function run(runId: number, query: string, transport: TransportName): Promise<void> {
  const controller = new AbortController();
  current = { run: runId, controller };
  try {
    // A syntax error is thrown here, and a missing engine rejects here: before anything is subscribed.
    const continuous = new ContinuousQuery(query);
    await continuous.prepare();
    if (controller.signal.aborted) return;
    report({ type: 'running', run: runId, engine: 'worker' });
    for await (const result of runContinuousQuery(continuous, { signal: controller.signal, transport })) {
      if (controller.signal.aborted) break;
      report({ type: 'result', run: runId, result: resultView(result) });
    }
    if (!controller.signal.aborted) report({ type: 'ended', run: runId });
  } catch (error) {
    if (!controller.signal.aborted) report({ type: 'failed', run: runId, message: error instanceof Error ? error.message : String(error) });
  }
}
