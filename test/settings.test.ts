/**
 * docs/design.md "Config", on `node services/single/src/main.ts` (what `npm start` runs)
 * in the shape under test:
 *
 * - without `SLUICE_ADMIN_TOKEN` the first start generates the admin token, prints it once
 *   (on stderr, never into the JSON log) and keeps it in `<data dir>/admin-token`; the next
 *   start reads it back and prints nothing; without `SLUICE_ENCRYPTION_KEY` it keeps a
 *   generated key in `<data dir>/encryption-key` (0600), never printed nor logged, and reads
 *   it back; the services on their own require it;
 * - `SLUICE_DATA_DIR` defaults to `./data`, relative to the directory `npm start` was run
 *   from (`INIT_CWD`);
 * - `DATABASE_URL` or `REDIS_URL` alone, or a bad value, stops the start with a message that
 *   names the variable;
 * - each service's `PORT` and `HOST` defaults (read from its settings schema) and the
 *   safe defaults of the rest of the table.
 */

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { apiConfigSchema } from '@sluice/api-service/config';
import { Sluice } from '@sluice/client';
import { parseEnv } from '@sluice/config';
import { generateKeyText, parseKeyring } from '@sluice/core';
import { deliveryWorkerConfigSchema } from '@sluice/delivery-worker/config';
import { rateLimiterConfigSchema } from '@sluice/rate-limiter/config';
import { configSchema as singleConfigSchema } from '@sluice/single/config';
import { Agent, fetch as undiciFetch } from 'undici';
import { rejectsWith } from './helpers/client.ts';
import { childState, SHAPE, tempDir } from './helpers/shape.ts';
import { spawnService } from './helpers/sluice.ts';

const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));
const MAIN = 'services/single/src/main.ts';
const TOKEN_BLOCK = /Sluice admin token \(shown once, kept in (.+)\):\n {2}(\S+)\n/;

/** A client of `url` with `token`, on a pool closed when the test ends. */
function clientOf(t: TestContext, url: string, token: string): Sluice {
  const agent = new Agent({ keepAliveTimeout: 1_000 });
  t.after(() => agent.close());
  return new Sluice({
    baseUrl: url,
    token,
    fetch: (u, init) => undiciFetch(u, { ...init, dispatcher: agent }),
  });
}

/** Starts `npm start`'s process on `env` (no admin token given); stopped when the test ends. */
async function start(t: TestContext, env: Record<string, string>) {
  // Port 0, the address read from its "listening" line: a port picked free beforehand may be
  // taken by another file's process before this one listens (seen once in CI: EADDRINUSE).
  let url = '';
  const child = await spawnService(MAIN, { ...env, PORT: '0' }, (line) => {
    const logged = /"msg":"listening"/.test(line) ? (JSON.parse(line) as { url?: string }).url : undefined;
    if (logged !== undefined) url = logged;
  });
  let stopped = false;
  t.after(async () => {
    if (!stopped) await child.kill9();
  });
  return {
    url,
    /** Everything it wrote so far, stdout and stderr. */
    output: () => child.logs.join('\n'),
    stop: async () => {
      stopped = true;
      return child.stop();
    },
  };
}

/** Runs the process to its exit with only `env`'s settings; its code and stderr. */
async function runToExit(env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  const inherited = { ...process.env };
  for (const name of Object.keys(inherited))
    if (/^(SLUICE_|DATABASE_URL$|REDIS_URL$|PORT$)/.test(name)) delete inherited[name];
  const dataDir = await tempDir();
  try {
    await promisify(execFile)(process.execPath, [MAIN], {
      cwd: REPO_ROOT,
      env: { ...inherited, PORT: '0', SLUICE_DATA_DIR: dataDir, ...env },
      timeout: 30_000,
    });
    return { code: 0, stderr: '' };
  } catch (err) {
    const e = err as { code?: number; stderr?: string };
    return { code: e.code ?? -1, stderr: e.stderr ?? '' };
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

describe('service settings', () => {
  it('the admin token: generated on the first start, printed once, kept in <data dir>/admin-token', {
    timeout: 90_000,
  }, async (t) => {
    const state = await childState();
    t.after(() => state.close());
    const dataDir = state.env.SLUICE_DATA_DIR as string;
    // Neither shape given the encryption key: generated into the data dir as the token is.
    const { SLUICE_ENCRYPTION_KEY: _key, ...env } = state.env;

    const first = await start(t, env);
    // The token goes to stderr, the log to stdout: two pipes, so the block may land after
    // the 'sluice ready' line that start() waits for.
    for (let i = 0; i < 100 && !TOKEN_BLOCK.test(first.output()); i++) await sleep(50);
    const printed = TOKEN_BLOCK.exec(first.output());
    assert.ok(printed, `the token is printed at the first start:\n${first.output()}`);
    const [, file, token] = printed as unknown as [string, string, string];
    assert.equal(file, join(dataDir, 'admin-token'));
    assert.equal((await readFile(file, 'utf8')).trim(), token, 'kept in <data dir>/admin-token');
    const logLines = first
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'));
    assert.ok(logLines.length > 0, 'the JSON log');
    assert.ok(!logLines.some((l) => l.includes(token)), 'the token never goes into the log');
    const keyFile = join(dataDir, 'encryption-key');
    const key = (await readFile(keyFile, 'utf8')).trim();
    assert.equal(parseKeyring(key).keys.length, 1, 'kept in <data dir>/encryption-key');
    assert.equal((await stat(keyFile)).mode & 0o777, 0o600);
    assert.ok(!first.output().includes(key.split(':')[1] as string), 'the key is never printed nor logged');

    const tenant = await clientOf(t, first.url, token).tenants.create({ name: 'kept' });
    await rejectsWith(clientOf(t, first.url, `${token}x`).tenants.list(), 401, 'unauthorized');
    assert.equal(await first.stop(), 0);

    const second = await start(t, env);
    assert.doesNotMatch(second.output(), /admin token/i, 'printed once: not at the next start');
    const again = await clientOf(t, second.url, token).tenants.get(tenant.id);
    assert.equal(again.name, 'kept', 'the kept token works on the next start, on the same state');
    assert.equal((await readFile(keyFile, 'utf8')).trim(), key, 'the kept key is read back, not replaced');
    assert.equal(await second.stop(), 0);
  });

  it('SLUICE_DATA_DIR defaults to ./data where npm start was run (INIT_CWD)', {
    timeout: 60_000,
  }, async (t) => {
    const state = await childState();
    t.after(() => state.close());
    const cwd = await tempDir();
    t.after(() => rm(cwd, { recursive: true, force: true }));
    const { SLUICE_DATA_DIR: _given, ...env } = state.env;

    const box = await start(t, { ...env, INIT_CWD: cwd });
    const token = (await readFile(join(cwd, 'data', 'admin-token'), 'utf8')).trim();
    assert.ok(box.output().includes(token), 'the token it printed is the one kept in ./data');
    if (SHAPE === 'single') assert.ok(existsSync(join(cwd, 'data', 'sluice.db')), './data/sluice.db');
    await clientOf(t, box.url, token).tenants.list();
    assert.equal(await box.stop(), 0);
  });

  it('DATABASE_URL or REDIS_URL alone, or a bad value: the start stops, naming the variable', {
    timeout: 60_000,
  }, async () => {
    const onlyDatabase = await runToExit({ DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/x' });
    assert.equal(onlyDatabase.code, 2, onlyDatabase.stderr);
    assert.match(onlyDatabase.stderr, /REDIS_URL: required when the other of DATABASE_URL\/REDIS_URL is set/);

    const onlyRedis = await runToExit({ REDIS_URL: 'redis://127.0.0.1:6379/0' });
    assert.equal(onlyRedis.code, 2, onlyRedis.stderr);
    assert.match(onlyRedis.stderr, /DATABASE_URL: required when the other of DATABASE_URL\/REDIS_URL is set/);

    const badPort = await runToExit({ PORT: 'eighty' });
    assert.equal(badPort.code, 2, badPort.stderr);
    assert.match(badPort.stderr, /PORT/);
  });

  it("the pool's kept connections: 3 by default, never more than the pool", () => {
    const env = {
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/x',
      REDIS_URL: 'redis://127.0.0.1:6379/0',
      SLUICE_ADMIN_TOKEN: 'a'.repeat(16),
      SLUICE_ENCRYPTION_KEY: generateKeyText(),
    };
    const schemas = [
      singleConfigSchema,
      apiConfigSchema,
      rateLimiterConfigSchema,
      deliveryWorkerConfigSchema,
    ];
    for (const schema of schemas) {
      assert.equal(parseEnv(schema, env).SLUICE_PG_POOL_MIN, 3);
      assert.equal(parseEnv(schema, { ...env, SLUICE_PG_POOL_MIN: '0' }).SLUICE_PG_POOL_MIN, 0);
      assert.throws(
        () => parseEnv(schema, { ...env, SLUICE_PG_POOL_SIZE: '2', SLUICE_PG_POOL_MIN: '3' }),
        /SLUICE_PG_POOL_MIN: must be at most SLUICE_PG_POOL_SIZE \(got "3"\)/,
      );
    }
  });

  it('the destination cache: 100,000 by default in every process, a positive integer', () => {
    const env = {
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/x',
      REDIS_URL: 'redis://127.0.0.1:6379/0',
      SLUICE_ADMIN_TOKEN: 'a'.repeat(16),
      SLUICE_ENCRYPTION_KEY: generateKeyText(),
    };
    for (const schema of [
      singleConfigSchema,
      apiConfigSchema,
      rateLimiterConfigSchema,
      deliveryWorkerConfigSchema,
    ]) {
      assert.equal(parseEnv(schema, env).SLUICE_DESTINATION_CACHE_SIZE, 100_000);
      const set = { ...env, SLUICE_DESTINATION_CACHE_SIZE: '5000' };
      assert.equal(parseEnv(schema, set).SLUICE_DESTINATION_CACHE_SIZE, 5_000);
      for (const bad of ['0', 'many', '2.5'])
        assert.throws(
          () => parseEnv(schema, { ...env, SLUICE_DESTINATION_CACHE_SIZE: bad }),
          new RegExp(`SLUICE_DESTINATION_CACHE_SIZE: .*\\(got "${bad.replace('.', '\\.')}"\\)`),
        );
    }
  });

  it('PORT and HOST default per service: 3000 (the API, the single box), 3001, 3002; 127.0.0.1', () => {
    const urls = {
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/x',
      REDIS_URL: 'redis://127.0.0.1:6379/0',
      SLUICE_ENCRYPTION_KEY: generateKeyText(),
    };
    const single = parseEnv(singleConfigSchema, {});
    const api = parseEnv(apiConfigSchema, { ...urls, SLUICE_ADMIN_TOKEN: 'a'.repeat(16) });
    const limiter = parseEnv(rateLimiterConfigSchema, urls);
    const worker = parseEnv(deliveryWorkerConfigSchema, urls);
    assert.deepEqual(
      [single, api, limiter, worker].map((c) => [c.PORT, c.HOST]),
      [
        [3000, '127.0.0.1'],
        [3000, '127.0.0.1'],
        [3001, '127.0.0.1'],
        [3002, '127.0.0.1'],
      ],
    );
    assert.equal(single.SLUICE_LEASE_MS, 120_000, 'one lease default, in the schema');
    assert.equal(limiter.SLUICE_LEASE_MS, 120_000);
    assert.equal(single.SLUICE_DATA_DIR, './data');
    assert.equal(single.SLUICE_ADMIN_TOKEN, undefined, 'generated at the first start, not defaulted');
    assert.equal(single.SLUICE_ALLOW_PRIVATE_NETWORKS, false);
    assert.equal(api.SLUICE_ALLOW_PRIVATE_NETWORKS, false);
    assert.equal(single.SLUICE_MAX_PAYLOAD_BYTES, 256 * 1024);
    assert.equal(single.SLUICE_MAX_REQUEST_BYTES, 8 * 1024 * 1024);
    assert.equal(api.SLUICE_MAX_PAYLOAD_BYTES, 256 * 1024);
    assert.equal(api.SLUICE_MAX_REQUEST_BYTES, 8 * 1024 * 1024);
    assert.throws(
      () => parseEnv(apiConfigSchema, urls),
      /SLUICE_ADMIN_TOKEN/,
      'the API service needs the token',
    );
    assert.equal(single.SLUICE_ENCRYPTION_KEY, undefined, 'kept in the data dir, not defaulted');
    const { SLUICE_ENCRYPTION_KEY: _key, ...unkeyed } = urls;
    for (const schema of [rateLimiterConfigSchema, deliveryWorkerConfigSchema])
      assert.throws(
        () => parseEnv(schema, unkeyed),
        /SLUICE_ENCRYPTION_KEY: .*\(unset\)/,
        'each service needs the key',
      );
  });
});
