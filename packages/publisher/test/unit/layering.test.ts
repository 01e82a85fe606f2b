import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const eslint = new ESLint({ cwd: root });

/** The layering messages ESLint reports for `source` as if it were the file at `path`. */
async function layeringErrors(path: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath: `${root}${path}` });
  return (result?.messages ?? []).filter((message) => message.ruleId === 'no-restricted-imports').map((message) => message.message);
}

/** The repository's own lint configuration is the fixture: a backward import must fail. */
describe('the layering rule (eslint.config.js)', () => {
  it.each([
    ['packages/publisher/src/model/fixture.ts', "import { LogAppendError } from '../log/event-log.js';", /model sits before log/],
    ['packages/publisher/src/render/fixture.ts', "import type { EventLog } from '../log/event-log.js';", /render sits before log/],
    ['packages/publisher/src/publish/fixture.ts', "import { buildApp } from '../http/app.js';", /publish sits before http/],
    ['packages/publisher/src/publish/sse/fixture.ts', "import { buildApp } from '../../http/app.js';", /publish sits before http/],
    ['packages/publisher/src/config/fixture.ts', "import { formats } from '../render/output-formats.js';", /config sits before render/],
    ['packages/publisher/src/http/routes/fixture.ts', "import { createPublisher } from '../../publisher.js';", /publisher\.ts composes the layers/],
    ['packages/publisher/src/model/fixture.ts', "import { createPublisher } from '../publisher.js';", /publisher\.ts composes the layers/],
    ['packages/client/src/transport/fixture.ts', "import { decodeElement } from '../decode/decode-element.js';", /transport sits before decode/],
    ['packages/client/src/window/fixture.ts', "import { runContinuousQuery } from '../query/run-continuous-query.js';", /window sits before query/],
    ['packages/client/src/subscribe.ts', "import { ContinuousQuery } from './query/continuous-query.js';", /subscribe sits before query/],
    ['packages/client/src/latency/fixture.ts', "import { subscribe } from '../subscribe.js';", /latency sits before subscribe/],
    ['packages/client/src/decode/fixture.ts', "import { buildApp } from '../../../publisher/src/http/app.js';", /@rdf-stream\/publisher through its entry point/],
    ['packages/bench/src/fleet/fixture.ts', "import { subscribe } from '../../../client/src/subscribe.js';", /@rdf-stream\/client through its entry point/],
    ['packages/publisher/src/model/fixture.ts', "import { mediaTypes } from '../../../protocol/src/index.js';", /@rdf-stream\/protocol through its entry point/],
    ['packages/protocol/src/fixture.ts', "import { formats } from '../../publisher/src/render/output-formats.js';", /@rdf-stream\/publisher through its entry point/],
    ['packages/protocol/src/fixture.ts', "import { subscribe } from '@rdf-stream/client';", /@rdf-stream\/protocol imports nothing from outside itself/],
    ['packages/protocol/src/fixture.ts', "import { readFileSync } from 'node:fs';", /@rdf-stream\/protocol imports nothing from outside itself/],
    ['packages/protocol/src/fixture.ts', "import { Parser } from 'n3';", /@rdf-stream\/protocol imports nothing from outside itself/],
  ])('%s: %s fails', async (path, source, message) => {
    expect(await layeringErrors(path, source)).toEqual([expect.stringMatching(message)]);
  });

  it.each([
    ['packages/publisher/src/log/fixture.ts', "import type { LoggedElement } from '../render/render-element.js';"],
    ['packages/publisher/src/http/routes/fixture.ts', "import { StreamHub } from '../../publish/stream-hub.js';"],
    ['packages/publisher/src/model/fixture.ts', "import type { Clock, Logger } from '../clock-and-logger.js';"],
    ['packages/publisher/src/publish/fixture.ts', "import { PublisherError } from '../errors.js';"],
    ['packages/publisher/src/config/fixture.ts', "import { ABSOLUTE_IRI } from '../model/vocabulary.js';"],
    ['packages/client/src/query/fixture.ts', "import { subscribe } from '../subscribe.js';"],
    ['packages/client/src/transport/fixture.ts', "import { parseElementId } from '../element-id.js';"],
    ['packages/client/src/decode/fixture.ts', "import { createPublisher } from '@rdf-stream/publisher';"],
    ['packages/publisher/src/model/fixture.ts', "import { mediaTypes } from '@rdf-stream/protocol';"],
    ['packages/client/src/transport/fixture.ts', "import { parseGapEventData } from '@rdf-stream/protocol';"],
    ['packages/dashboard/src/page/fixture.ts', "import { mediaTypes } from '@rdf-stream/protocol';"],
    ['packages/protocol/src/fixture.ts', "import { mediaTypes } from './index.js';"],
  ])('%s: %s is allowed', async (path, source) => {
    expect(await layeringErrors(path, source)).toEqual([]);
  });
});
