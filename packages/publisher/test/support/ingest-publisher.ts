import { startTestPublisher, type TestPublisher } from '../../src/testing.js';

/** A publisher whose one stream, `sensors`, takes ingested elements (no shapes) with `token`. */
export function startIngestPublisher(token: string, flags: readonly string[] = []): Promise<TestPublisher> {
  return startTestPublisher({
    config: 'streams:\n  - id: sensors\n    title: Sensors pushing their observations\n    shape: none\n    source: { kind: ingest, tokenEnv: INGEST_TOKEN }\n',
    env: { INGEST_TOKEN: token },
    flags: ['--log', 'memory', ...flags],
  });
}
