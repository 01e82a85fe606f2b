import { readRedisInfo } from '../collect/redis-info.js';
import { ProcessSampler, type ResourceSummary } from '../collect/process-sampler.js';
import type { RunServices } from './run-services.js';

/** One publisher instance of a run: where it served, how many clients it had, what it used. */
export interface InstanceResources {
  readonly url: string;
  readonly clients: number;
  readonly cpuMilli: ResourceSummary['cpuMilli'];
  readonly rssMiB: ResourceSummary['rssMiB'];
}

/** The Redis/Valkey of a run (log redis): its CPU and RSS (when it runs on this machine) and its own account of its memory. */
export interface RedisResources {
  readonly url: string;
  /** `appendfsync` of the bench's own Valkey; null for a server given by `--redis-url`. */
  readonly appendfsync: string | null;
  readonly cpuMilli: ResourceSummary['cpuMilli'] | null;
  readonly rssMiB: ResourceSummary['rssMiB'] | null;
  /** `INFO memory` at the end of the measurement: `used_memory` and `used_memory_peak` (MiB). */
  readonly usedMemoryMiB: number | null;
  readonly usedMemoryPeakMiB: number | null;
}

const mib = (bytes: number | null) => (bytes === null ? null : Math.round((bytes / 1_048_576) * 10) / 10);

/**
 * Samples each publisher instance apart (besides the run's sum over all) and the Redis/Valkey
 * they share, like the publisher: CPU and RSS once a second.
 */
export class InstanceSamplers {
  readonly #services: RunServices;
  readonly #instances: ProcessSampler[];
  readonly #redis: ProcessSampler | undefined;

  constructor(services: RunServices) {
    this.#services = services;
    this.#instances = services.instances.map((instance) => new ProcessSampler([...instance.pids]));
    this.#redis = services.redis === undefined || services.redis.pid === null ? undefined : new ProcessSampler([services.redis.pid]);
  }

  start(): void {
    for (const sampler of [...this.#instances, ...(this.#redis ? [this.#redis] : [])]) sampler.start();
  }

  /** Stops sampling; `clientsOf(index)` is how many clients the fleet dealt to instance `index`. */
  async stop(clientsOf: (index: number) => number): Promise<{ instances: InstanceResources[]; redis: RedisResources | undefined }> {
    const instances = await Promise.all(
      this.#instances.map(async (sampler, index) => {
        const { cpuMilli, rssMiB } = await sampler.stop();
        return { url: this.#services.instances[index]!.url, clients: clientsOf(index), cpuMilli, rssMiB };
      }),
    );
    const redis = this.#services.redis;
    if (redis === undefined) return { instances, redis: undefined };
    const info = await readRedisInfo(redis.url).catch(() => null);
    const resources = await this.#redis?.stop();
    return {
      instances,
      redis: {
        url: redis.url.replace(/\/\/[^@/]*@/, '//'),
        appendfsync: redis.appendfsync,
        cpuMilli: resources?.cpuMilli ?? null,
        rssMiB: resources?.rssMiB ?? null,
        usedMemoryMiB: mib(info?.usedMemoryBytes ?? null),
        usedMemoryPeakMiB: mib(info?.usedMemoryPeakBytes ?? null),
      },
    };
  }
}
