/**
 * Where and on what the numbers were measured: the machine, the runtimes, the libraries,
 * the Sluice commit. Written once per bench session (sessions.ndjson) and into BENCHMARKS.md.
 */

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, totalmem } from 'node:os';
import { Redis } from 'ioredis';
import pg from 'pg';

const require = createRequire(import.meta.url);

function sh(cmd: string, args: string[], cwd?: string): string | null {
  try {
    return execFileSync(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    return null;
  }
}

function versionOf(pkg: string): string | null {
  try {
    return (require(`${pkg}/package.json`) as { version: string }).version;
  } catch {
    return null;
  }
}

export async function redisInfo(redis: {
  host: string;
  port: number;
}): Promise<{ version: string; pid: number } | null> {
  const client = new Redis({
    ...redis,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 1_000,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    const info = await client.info('server');
    return {
      version: /redis_version:(\S+)/.exec(info)?.[1] ?? '?',
      pid: Number(/process_id:(\d+)/.exec(info)?.[1]),
    };
  } catch {
    return null;
  } finally {
    client.disconnect();
  }
}

/** The version of the Postgres server at `serverUrl` (its `postgres` database) and whether autovacuum is off, or null when unreachable. */
export async function postgresInfo(serverUrl: string): Promise<string | null> {
  const url = new URL(serverUrl);
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.href, connectionTimeoutMillis: 2_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    const version =
      (await client.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? '?';
    // The hot tables are updated twice a delivery: without autovacuum their dead rows stay,
    // and a long run is slower than it would be on a server with its defaults.
    const autovacuum = (await client.query<{ autovacuum: string }>('SHOW autovacuum')).rows[0]?.autovacuum;
    return autovacuum === 'off' ? `${version}, autovacuum off` : version;
  } catch {
    return null;
  } finally {
    await client.end().catch(() => {});
  }
}

export interface MachineInfo {
  cores: number;
  cpuModel: string;
  memoryGiB: number;
  kernel: string | null;
  node: string;
  redis: string | null;
  /** The server's version (sessions before the distributed target: `psql --version`). */
  postgres: string | null;
  libraries: Record<string, string | null>;
  sluiceCommit: string | null;
  sluiceDirty: boolean | null;
}

export async function machineInfo(
  sluiceRoot: string,
  redis: { host: string; port: number },
  postgresUrl: string,
): Promise<MachineInfo> {
  const cpuinfo = (() => {
    try {
      return readFileSync('/proc/cpuinfo', 'utf8');
    } catch {
      return '';
    }
  })();
  const status = sh('git', ['status', '--porcelain', '--', 'packages', 'services'], sluiceRoot);
  return {
    cores: cpus().length,
    cpuModel: /model name\s*:\s*(.+)/.exec(cpuinfo)?.[1]?.trim() ?? cpus()[0]?.model ?? '?',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    kernel: sh('uname', ['-r']),
    node: process.versions.node,
    redis: (await redisInfo(redis))?.version ?? null,
    postgres: await postgresInfo(postgresUrl),
    libraries: {
      bullmq: versionOf('bullmq'),
      ioredis: versionOf('ioredis'),
      pg: versionOf('pg'),
      'rate-limiter-flexible': versionOf('rate-limiter-flexible'),
      undici: versionOf('undici'),
    },
    sluiceCommit: sh('git', ['rev-parse', '--short', 'HEAD'], sluiceRoot),
    sluiceDirty: status === null ? null : status.length > 0,
  };
}
