/**
 * The shape under test (docs/design.md I7: one behavioural suite, both shapes). `SLUICE_TEST_SHAPE`
 * chooses: `single` (default) starts the single box on a fresh SQLite data dir;
 * `distributed` starts the API, a rate limiter and a delivery worker in this process over a
 * fresh Postgres database and a fresh Redis key prefix (`startDistributedBox`, what
 * `npm start` runs with both URLs set). Tests see only what both have: the URL, the admin
 * token, whether a destination is scheduled, SQL on the store (the same tables in both),
 * a restart on the same state, and the settings a child process needs to run the same shape.
 */

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import { parseConfig } from '@sluice/config';
import { generateKeyText } from '@sluice/core';
import type { LookupFunction } from '@sluice/engine';
import { startSingleBox } from '@sluice/single';
import { configSchema, isDistributed } from '@sluice/single/config';
import { startDistributedBox } from '@sluice/single/distributed';
import { encryptionKey as resolveKey } from '@sluice/single/encryption-key';
import { ensureDatabase, PostgresStore } from '@sluice/store-postgres';
import { cleanup, requirePostgres, requireRedis } from '@sluice/testing';
import { Redis } from 'ioredis';
import pg from 'pg';
import { pino } from 'pino';
import type { z } from 'zod';

export type Shape = 'single' | 'distributed';

export const SHAPE: Shape = process.env.SLUICE_TEST_SHAPE === 'distributed' ? 'distributed' : 'single';

export const DATABASE_URL = process.env.SLUICE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.SLUICE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0';

/**
 * What a test may set: `npm start`'s settings by their names (numbers may stay numbers; the
 * schema gives the rest their defaults), the same in both shapes, and a DNS lookup.
 */
export type BoxOptions = z.input<typeof configSchema> & { lookup?: LookupFunction | undefined };

/** The settings of a box under test: private networks allowed (the receivers are local), a quiet log. */
function testConfig(opts: BoxOptions, own: z.input<typeof configSchema>) {
  const { lookup: _lookup, ...settings } = opts;
  return parseConfig(configSchema, {
    SLUICE_ALLOW_PRIVATE_NETWORKS: 'true',
    SLUICE_LOG_LEVEL: 'silent',
    ...settings,
    ...own,
  });
}

type SqlValue = string | number | null;

export interface ShapeBox {
  url: string;
  adminToken: string;
  /** Holds `admin-token` (and `sluice.db` in the single box); removed by `close`. */
  dataDir: string;
  isScheduled(destinationId: string): Promise<boolean>;
  /** SQL on the store, `?` placeholders; rows as the driver gives them. */
  query<T = Record<string, unknown>>(sql: string, params?: SqlValue[]): Promise<T[]>;
  /** Stops everything, runs `meanwhile`, starts again on the same state, port and token. */
  restart(meanwhile?: () => Promise<void>): Promise<void>;
  /** The environment that makes `services/single/src/main.ts` run this shape on this state. */
  childEnv(): Record<string, string>;
  close(): Promise<void>;
}

export async function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'sluice-test-'));
}

const unique = () => randomBytes(6).toString('hex');

/** `?` placeholders as Postgres' `$1, $2, …`. */
const numbered = (sql: string): string => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

function sqliteQuery(file: string): ShapeBox['query'] {
  return async <T>(sql: string, params: SqlValue[] = []) => {
    const db = new DatabaseSync(file);
    try {
      const statement = db.prepare(sql);
      if (/^\s*select/i.test(sql)) return statement.all(...(params as SQLInputValue[])) as T[];
      statement.run(...(params as SQLInputValue[]));
      return [];
    } finally {
      db.close();
    }
  };
}

/** The single box on a fresh data dir. */
async function startSingle(opts: BoxOptions, token: string | undefined): Promise<ShapeBox> {
  const dataDir = await tempDir();
  const start = (port: number) =>
    startSingleBox(testConfig(opts, { SLUICE_DATA_DIR: dataDir, PORT: port, SLUICE_ADMIN_TOKEN: token }), {
      lookup: opts.lookup,
    });
  let box = await start(0).catch(async (err: unknown) => {
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  });
  const port = Number(new URL(box.url).port);
  const file = join(dataDir, 'sluice.db');
  return {
    url: box.url,
    adminToken: box.adminToken,
    dataDir,
    isScheduled: async (id) => box.isScheduled(id),
    query: sqliteQuery(file),
    restart: async (meanwhile) => {
      await box.close();
      await meanwhile?.();
      box = await start(port);
    },
    childEnv: () => ({ SLUICE_DATA_DIR: dataDir }),
    close: async () => {
      await box.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A fresh Postgres database, Redis key prefix and data dir, and how to drop them. Where the
 * test's Postgres or Redis does not answer, the test fails saying which and how to start it.
 */
async function distributedState() {
  await Promise.all([requirePostgres(DATABASE_URL), requireRedis(REDIS_URL, 'SLUICE_TEST_REDIS_URL')]);
  const dataDir = await tempDir();
  const database = `sluice_t_${unique()}`;
  const url = new URL(DATABASE_URL);
  url.pathname = `/${database}`;
  const databaseUrl = url.toString();
  const prefix = `sluice-test-${unique()}`;
  // Given, as the separate services need it (a child on this state, a cluster's processes).
  const encryptionKey = generateKeyText();
  await ensureDatabase(databaseUrl);
  const sql = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  // The DROP … WITH (FORCE) below ends any connection left; an idle one must not crash the test.
  sql.on('error', () => {});
  return {
    dataDir,
    databaseUrl,
    prefix,
    encryptionKey,
    query: async <T>(text: string, params: SqlValue[] = []) =>
      (await sql.query(numbered(text), params)).rows as T[],
    env: (): Record<string, string> => ({
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      SLUICE_REDIS_PREFIX: prefix,
      SLUICE_DATA_DIR: dataDir,
      SLUICE_ENCRYPTION_KEY: encryptionKey,
    }),
    drop: async () => {
      await sql.end();
      const admin = new pg.Client({ connectionString: DATABASE_URL });
      await admin.connect();
      try {
        await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      } finally {
        await admin.end();
      }
      await deleteRedisKeys(prefix);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Fresh state for Sluice run as a child process (`node services/single/src/main.ts`). */
export async function childState(): Promise<{
  env: Record<string, string>;
  query: ShapeBox['query'];
  close(): Promise<void>;
}> {
  if (SHAPE === 'distributed') {
    const state = await distributedState();
    return { env: state.env(), query: state.query, close: state.drop };
  }
  const dataDir = await tempDir();
  return {
    env: { SLUICE_DATA_DIR: dataDir },
    query: sqliteQuery(join(dataDir, 'sluice.db')),
    close: () => rm(dataDir, { recursive: true, force: true }),
  };
}

/** The three distributed services in this process, on a database and key prefix of their own. */
async function startDistributed(opts: BoxOptions, token: string | undefined): Promise<ShapeBox> {
  const state = await distributedState();
  const { dataDir, databaseUrl, prefix, encryptionKey } = state;
  const start = async (port: number) => {
    const config = testConfig(opts, {
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      SLUICE_REDIS_PREFIX: prefix,
      SLUICE_DATA_DIR: dataDir,
      SLUICE_ADMIN_TOKEN: token,
      SLUICE_ENCRYPTION_KEY: encryptionKey,
      PORT: port,
    });
    if (!isDistributed(config)) throw new Error('both URLs are set');
    const keyring = resolveKey(dataDir, config.SLUICE_ENCRYPTION_KEY).keyring;
    const store = await PostgresStore.open(databaseUrl, { keyring, poolSize: 10 });
    const box = await startDistributedBox(
      { ...config, SLUICE_ENCRYPTION_KEY: keyring },
      {
        store,
        logger: pino({ level: config.SLUICE_LOG_LEVEL }),
        lookup: opts.lookup,
      },
    ).catch(async (err: unknown) => {
      await store.close();
      throw err;
    });
    return {
      box,
      close: async () => {
        await box.close();
        await store.close();
      },
    };
  };
  const drop = state.drop;
  let running = await start(0).catch(async (err: unknown) => {
    await drop();
    throw err;
  });
  const port = Number(new URL(running.box.url).port);
  return {
    url: running.box.url,
    adminToken: running.box.adminToken,
    dataDir,
    isScheduled: (id) => running.box.isScheduled(id),
    query: state.query,
    restart: async (meanwhile) => {
      await running.close();
      await meanwhile?.();
      running = await start(port);
    },
    childEnv: state.env,
    close: async () => {
      await running.close();
      await drop();
    },
  };
}

/** Sluice in the shape under test, on fresh state. */
export function startShape(opts: BoxOptions = {}, adminToken?: string): Promise<ShapeBox> {
  return SHAPE === 'distributed' ? startDistributed(opts, adminToken) : startSingle(opts, adminToken);
}

/** Deletes every key under `prefix` in the test Redis (a test's own installation, BullMQ's keys included). */
export async function deleteRedisKeys(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL);
  try {
    await cleanup(redis, prefix);
  } finally {
    redis.disconnect();
  }
}
