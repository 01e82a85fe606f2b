import { existsSync } from 'node:fs';
import { streamIri } from '@rdf-stream/protocol';
import { readRedisInfo } from '../collect/redis-info.js';
import { PrivateNchan } from '../process/private-nchan.js';
import { freePort } from '../reliability/free-port.js';
import { NchanRelay } from './nchan-relay.js';
import type { BenchMode } from '../fleet/worker-protocol.js';
import type { BenchOptions } from './bench-options.js';
import { processTree, type ServerInstances, startProxy, startServerInstances, stopProxy } from './services.js';

/** A run's services as the run samples them. */
export interface RunServices {
  /** The stream on the first publisher: what the run's monitor watches and `/latest` is sized on. */
  readonly directUrl: string;
  /** Where the clients go, dealt round-robin: each publisher instance, or the proxy. */
  readonly clientUrls: readonly string[];
  /** The publishers' processes and the proxy's, summed as "server" (as the study measured its pod). */
  readonly pids: readonly number[];
  /** Each publisher instance: its stream URL and its processes (a cluster primary and its workers). */
  readonly instances: ReadonlyArray<{ readonly url: string; readonly pids: readonly number[] }>;
  /** Log redis: the server's URL, pid (when it runs on this machine) and `appendfsync` (when the bench started it). */
  readonly redis?: { readonly url: string; readonly pid: number | null; readonly appendfsync: string | null };
  /** A peer run: the elements handed to the peer (seq → epoch ms), what the run accounts for instead of the monitor's. */
  readonly published?: ReadonlyMap<number, number>;
  stop(): Promise<void>;
}

/** The polling modes go through `--proxy` (a cache); the pushed streams go to the publisher. */
export const viaProxy = (mode: BenchMode) => mode === 'poll' || mode === 'long-poll';

/**
 * The publishers (unless `--target`), the Redis/Valkey they share (log redis) and the proxy in
 * front of them (polling modes, one instance): URLs and pids to sample.
 */
export async function startServices(options: BenchOptions, mode: BenchMode, clients: number): Promise<RunServices> {
  if (options.peer === 'nchan') return startNchanPeer(options, clients);
  const servers: ServerInstances | undefined = options.target === undefined ? await startServerInstances(options, options.log, options.serverInstances, clients) : undefined;
  const instanceUrls = servers?.publishers.map((publisher) => streamIri(publisher.url, 'parking')) ?? [options.target!];
  const directUrl = instanceUrls[0]!;
  const proxyDir = `${options.outDir}/${options.proxy}`;
  const proxyPort = options.port + options.serverInstances;
  let proxyPid: number | undefined;
  let clientUrls = instanceUrls;
  const stop = async () => {
    if (proxyPid !== undefined && options.proxy !== 'none') await stopProxy(options.proxy, proxyDir);
    await servers?.stop();
  };
  try {
    if (options.proxy !== 'none' && viaProxy(mode)) {
      proxyPid = await startProxy(options.proxy, new URL(directUrl).host, proxyPort, proxyDir);
      clientUrls = [directUrl.replace(`:${new URL(directUrl).port}`, `:${proxyPort}`)];
    }
    const instances = await Promise.all((servers?.publishers ?? []).map(async (publisher, index) => ({ url: instanceUrls[index]!, pids: await processTree(publisher.pid) })));
    const pids = [...instances.flatMap((instance) => instance.pids), ...(proxyPid === undefined ? [] : [proxyPid])];
    const redis = servers?.redis === undefined ? undefined : { url: servers.redis.url, pid: servers.redis.own?.pid ?? (await localRedisPid(servers.redis.url)), appendfsync: servers.redis.own?.appendfsync ?? null };
    return { directUrl, clientUrls, pids, instances, ...(redis === undefined ? {} : { redis }), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Subscribers of the publisher during a peer run: the run's monitor and the relay. */
const PEER_RUN_PUBLISHER_SUBSCRIBERS = 2;

/**
 * A peer run: the publisher (unmeasured) makes the elements, the relay hands each to nchan,
 * and the fleet subscribes to nchan; the run samples nchan's worker process alone.
 */
async function startNchanPeer(options: BenchOptions, clients: number): Promise<RunServices> {
  const servers = await startServerInstances(options, 'file', 1, PEER_RUN_PUBLISHER_SUBSCRIBERS);
  let nchan: PrivateNchan | undefined;
  let relay: NchanRelay | undefined;
  const stop = async () => {
    await relay?.stop();
    await nchan?.stop(options.outDir);
    await servers.stop();
  };
  try {
    const directUrl = streamIri(servers.publishers[0]!.url, 'parking');
    nchan = await PrivateNchan.start(await freePort(), clients);
    relay = new NchanRelay(nchan);
    await relay.start(directUrl);
    return { directUrl, clientUrls: [nchan.streamUrl], pids: [nchan.workerPid], instances: [], published: relay.published, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The pid of a Redis/Valkey given by `--redis-url`, when it runs on this machine (its INFO's `process_id` is in /proc). */
async function localRedisPid(url: string): Promise<number | null> {
  const host = new URL(url).hostname;
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(host)) return null;
  const { pid } = await readRedisInfo(url).catch(() => ({ pid: null }));
  return pid !== null && existsSync(`/proc/${pid}`) ? pid : null;
}
