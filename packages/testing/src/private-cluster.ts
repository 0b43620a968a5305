/**
 * A Redis Cluster of a test's or a benchmark's own: `masters` masters with `replicasPerMaster`
 * replicas each, every node a `redis-server --cluster-enabled yes` on loopback keeping nothing
 * but its `nodes-<port>.conf` (in a temporary directory), joined by
 * `redis-cli --cluster create … --cluster-replicas <n> --cluster-yes`. Ready once every node
 * says `cluster_state:ok` with all 16384 slots served, every master has its replicas, every
 * replica's link to its master is up (so a master killed at once still fails over) and every
 * node's CLUSTER SLOTS lists them all (so a client's first map keeps its connections).
 *
 * Ports: a node on P also listens on P + 10000, its cluster bus. P is drawn from 20000–29999
 * and both ports are probed free: the bus stays under 40000 (≤ 65535), and the node's own
 * port below Linux's ephemeral range (32768–60999), where outgoing connections take theirs.
 *
 * Failover (what `waitForFailover` waits for): a master's peers mark it `fail` once a majority
 * of masters has not heard from it for `cluster-node-timeout`, then its replica wins an
 * election (after a delay of 0.5–1 s) and takes its slots.
 */

import { type ChildProcess, execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { listenOnce } from './ports.ts';
import {
  isRunning,
  launchRedis,
  onNode,
  RedisExitedError,
  signalAndWait,
  stopProcess,
} from './redis-process.ts';
import { INSTALL_REDIS, requireCommands } from './required.ts';

const SLOTS = 16_384;
const run = promisify(execFile);

/** One line of `CLUSTER NODES`, as one node sees the cluster. */
interface ClusterNode {
  id: string;
  port: number;
  role: 'master' | 'replica';
  /** The master a replica follows; null for a master. */
  masterId: string | null;
  /** The slot ranges it serves, inclusive: [first, last]. */
  slots: [number, number][];
  /** Flagged `fail`: a majority of masters agreed that it is unreachable. */
  failed: boolean;
}

export interface PrivateCluster {
  /** `redis://127.0.0.1:<port>`: one master, a seed for REDIS_URL. */
  url: string;
  /** Every node, for `new Cluster(seeds)`. */
  seeds: { host: '127.0.0.1'; port: number }[];
  /** The temporary directory of the nodes' `nodes-<port>.conf` files. */
  dir: string;
  /** The cluster as a running node sees it (`CLUSTER NODES`). */
  nodes(): Promise<ClusterNode[]>;
  /** The running masters that serve slots. */
  masterPorts(): Promise<number[]>;
  /** Signals the node on `port` and resolves once it has exited. */
  kill(port: number, signal?: 'SIGKILL' | 'SIGTERM'): Promise<void>;
  /**
   * Resolves with the port of the node that took over the slots of the master on `deadPort`
   * once every running node serves them from there and says `cluster_state:ok`; rejects
   * after `timeoutMs` (default 30 s).
   */
  waitForFailover(deadPort: number, timeoutMs?: number): Promise<number>;
  /** How many keys match `pattern` on each master (SCAN): port → count. */
  keysOnEachMaster(pattern: string): Promise<Map<number, number>>;
  /** Stops every node and removes the directory. */
  stop(): Promise<void>;
}

export interface PrivateClusterOptions {
  /** At least 3 (redis-cli's minimum). Default 3. */
  masters?: number;
  /** Default 1. */
  replicasPerMaster?: number;
  /** `cluster-node-timeout`: how long a master is unheard before its failover starts. Default 1500. */
  nodeTimeoutMs?: number;
}

export async function startPrivateCluster(options: PrivateClusterOptions = {}): Promise<PrivateCluster> {
  const { masters = 3, replicasPerMaster = 1, nodeTimeoutMs = 1_500 } = options;
  if (masters < 3) throw new Error(`a cluster needs at least 3 masters, not ${masters}`);
  requireCommands('a private Redis Cluster', ['redis-server', 'redis-cli'], INSTALL_REDIS);
  const dir = await mkdtemp(join(tmpdir(), 'sluice-cluster-'));
  const children = new Map<number, ChildProcess>();
  const onExit = (): void => {
    for (const child of children.values()) if (isRunning(child)) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', onExit);
  const stop = async (): Promise<void> => {
    process.off('exit', onExit);
    await Promise.all([...children.values()].map(stopProcess));
    await rm(dir, { recursive: true, force: true });
  };
  // The slots each killed master served, for waitForFailover.
  const served = new Map<number, [number, number][]>();
  const running = (): number[] => [...children].filter(([, c]) => isRunning(c)).map(([port]) => port);
  const nodes = async (): Promise<ClusterNode[]> => {
    let failure: unknown = new Error('no node of the cluster is running');
    for (const port of running()) {
      try {
        return await nodesSeenBy(port);
      } catch (err) {
        failure = err;
      }
    }
    throw failure;
  };
  const masterPorts = async (): Promise<number[]> => {
    const live = new Set(running());
    return (await nodes())
      .filter((n) => n.role === 'master' && !n.failed && n.slots.length > 0 && live.has(n.port))
      .map((n) => n.port);
  };

  try {
    const count = masters * (1 + replicasPerMaster);
    const reserved = new Set<number>();
    const startNode = async (): Promise<void> => {
      for (let attempt = 1; ; attempt++) {
        const port = await reservePorts(reserved);
        const conf = join(dir, `nodes-${port}.conf`);
        try {
          const child = await launchRedis(port, [
            ...['--cluster-enabled', 'yes', '--cluster-config-file', conf],
            ...['--cluster-node-timeout', String(nodeTimeoutMs), '--dir', dir],
            // A replica's first sync starts at once, not after the 5 s Redis waits for others.
            ...['--repl-diskless-sync-delay', '0'],
            // A master's PING moves its replicas' offsets off 0 within a second, not ten: only
            // then does CLUSTER SLOTS list them (formed, below).
            ...['--repl-ping-replica-period', '1'],
          ]);
          children.set(port, child);
          return;
        } catch (err) {
          // Taken between the probe and the bind (another session's server): another pair.
          if (!(err instanceof RedisExitedError) || attempt === 5) throw err;
        }
      }
    };
    // Settled, all of them, before a failure stops the others: none starts after stop().
    const started = await Promise.allSettled(Array.from({ length: count }, startNode));
    for (const result of started) if (result.status === 'rejected') throw result.reason;
    const ports = [...children.keys()].sort((a, b) => a - b);
    const addresses = ports.map((port) => `127.0.0.1:${port}`);
    const create = ['--cluster', 'create', ...addresses, '--cluster-replicas', String(replicasPerMaster)];
    await run('redis-cli', [...create, '--cluster-yes'], { timeout: 60_000 }).catch((err) => {
      throw new Error(`redis-cli --cluster create failed: ${err.message}\n${err.stdout ?? ''}`);
    });
    await until(30_000, 'the cluster to form', () => formed(ports, masters, replicasPerMaster));
    const first = (await masterPorts()).sort((a, b) => a - b)[0];
    return {
      url: `redis://127.0.0.1:${first}`,
      seeds: ports.map((port) => ({ host: '127.0.0.1', port })),
      dir,
      nodes,
      masterPorts,
      async kill(port, signal = 'SIGKILL') {
        const child = children.get(port);
        if (child === undefined) throw new Error(`no node of the cluster on ${port}`);
        if (isRunning(child)) served.set(port, (await nodes()).find((n) => n.port === port)?.slots ?? []);
        await signalAndWait(child, signal);
      },
      async waitForFailover(deadPort, timeoutMs = 30_000) {
        const lost = served.get(deadPort) ?? (await nodes()).find((n) => n.port === deadPort)?.slots ?? [];
        const slot = lost[0]?.[0];
        if (slot === undefined)
          throw new Error(`${deadPort} served no slots: there is no failover to wait for`);
        let heir = 0;
        await until(timeoutMs, `a replica to take over from ${deadPort}`, async () => {
          const live = running().filter((port) => port !== deadPort);
          for (const port of live) {
            const state = (await clusterInfo(port)).get('cluster_state');
            if (state !== 'ok') return `${port} says cluster_state:${state}`;
            const view = await nodesSeenBy(port);
            if (view.some((n) => n.port === deadPort && n.slots.length > 0))
              return `${port} sees ${deadPort} serving slots`;
            const owner = view.find(
              (n) => n.role === 'master' && n.slots.some(([a, b]) => a <= slot && slot <= b),
            );
            if (owner === undefined || owner.failed || !live.includes(owner.port))
              return `${port} sees slot ${slot} served by ${owner?.port ?? 'nobody'}`;
            heir = owner.port;
          }
          return null;
        });
        return heir;
      },
      async keysOnEachMaster(pattern) {
        const counts = new Map<number, number>();
        for (const port of await masterPorts()) counts.set(port, await countKeys(port, pattern));
        return counts;
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Reserves P and P + 10000 (its cluster bus) in `reserved` once both are free on 127.0.0.1. */
async function reservePorts(reserved: Set<number>): Promise<number> {
  for (let i = 0; i < 500; i++) {
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    const bus = port + 10_000;
    if (reserved.has(port) || reserved.has(bus)) continue;
    reserved.add(port).add(bus);
    if ((await listenOnce(port)) !== null && (await listenOnce(bus)) !== null) return port;
  }
  throw new Error('no free pair of loopback ports P and P + 10000 in 20000–39999');
}

/** Polls `check` (null: done; otherwise what is missing) every 50 ms until done or `timeoutMs`. */
async function until(timeoutMs: number, what: string, check: () => Promise<string | null>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const missing = await check().catch((err: Error) => err.message);
    if (missing === null) return;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}: ${missing}`);
    await sleep(50);
  }
}

/** Null once the cluster is formed (see the top of the file), otherwise what is missing. */
async function formed(ports: number[], masters: number, replicas: number): Promise<string | null> {
  for (const port of ports) {
    const info = await clusterInfo(port);
    for (const [field, value] of [
      ['cluster_state', 'ok'],
      ['cluster_slots_ok', String(SLOTS)],
      ['cluster_known_nodes', String(ports.length)],
    ] as const) {
      if (info.get(field) !== value) return `${port} says ${field}:${info.get(field)}`;
    }
  }
  const view = await nodesSeenBy(ports[0] ?? 0);
  const heads = view.filter((n) => n.role === 'master' && n.slots.length > 0);
  if (heads.length !== masters) return `${heads.length} masters serve slots, not ${masters}`;
  for (const head of heads) {
    const followers = view.filter((n) => n.masterId === head.id).length;
    if (followers !== replicas) return `master ${head.port} has ${followers} replicas, not ${replicas}`;
  }
  for (const replica of view.filter((n) => n.role === 'replica')) {
    const replication = await onNode(replica.port, (c) => c.info('replication'));
    if (!/^master_link_status:up\r?$/m.test(replication))
      return `replica ${replica.port}: its master link is not up`;
  }
  // CLUSTER SLOTS leaves out a replica that has had no data yet (offset 0). A client's first
  // map from a node that says so drops its connections to the replicas it began with, and a
  // command sent on one of them meanwhile fails with "Connection is closed".
  for (const port of ports) {
    const ranges = (await onNode(port, (c) => c.call('CLUSTER', 'SLOTS'))) as unknown[][];
    const short = ranges.find((r) => r.length - 2 !== 1 + replicas);
    if (short) return `${port} lists ${short.length - 2} nodes for slots ${short[0]}-${short[1]}`;
  }
  return null;
}

async function clusterInfo(port: number): Promise<Map<string, string>> {
  const text = String(await onNode(port, (c) => c.call('CLUSTER', 'INFO')));
  return new Map(
    text
      .split(/\r?\n/)
      .filter((line) => line.includes(':'))
      .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1)]),
  );
}

async function nodesSeenBy(port: number): Promise<ClusterNode[]> {
  return parseNodes(String(await onNode(port, (c) => c.call('CLUSTER', 'NODES'))));
}

/**
 * `<id> <ip:port@bus[,hostname]> <flags> <master|-> <ping-sent> <pong-recv> <epoch> <link>
 * <slot>…`, a slot being `n`, `first-last`, or `[n->-id]`/`[n-<-id]` while it migrates (skipped).
 */
function parseNodes(text: string): ClusterNode[] {
  return text
    .trim()
    .split('\n')
    .map((line): ClusterNode => {
      const [id = '', address = '', flagList = '', master = '-', , , , , ...slots] = line.trim().split(' ');
      const flags = flagList.split(',');
      return {
        id,
        port: Number(address.split('@')[0]?.split(':').at(-1)),
        role: flags.includes('master') ? 'master' : 'replica',
        masterId: master === '-' ? null : master,
        slots: slots
          .filter((s) => !s.startsWith('['))
          .map((s): [number, number] => {
            const [first, last = first] = s.split('-').map(Number);
            return [first ?? 0, last ?? 0];
          }),
        failed: flags.includes('fail'),
      };
    });
}

async function countKeys(port: number, pattern: string): Promise<number> {
  return onNode(port, async (c) => {
    let count = 0;
    let cursor = '0';
    do {
      const [next, keys] = await c.scan(cursor, 'MATCH', pattern, 'COUNT', 1_000);
      count += keys.length;
      cursor = next;
    } while (cursor !== '0');
    return count;
  });
}
