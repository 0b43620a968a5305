/**
 * The ops routes through `app.inject`, with no token: `/healthz` answers while the process
 * runs; `/readyz` is 200 while the readiness check passes (by default the store's ping) and
 * 503 while it throws, logging why; `/metrics` is the registry's text exposition.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newKeyring } from '@sluice/core';
import { StoreUnavailableError } from '@sluice/store';
import { SqliteStore } from '@sluice/store-sqlite';
import { pino } from 'pino';
import { Counter, Registry } from 'prom-client';
import { buildApi } from '../app.ts';
import type { ApiOptions } from '../context.ts';
import { ADMIN_TOKEN, RecordingDispatcher } from '../test-app.ts';

/** The API on an in-memory store, with these options besides; closed after `use`. */
async function withApi(
  options: Partial<ApiOptions>,
  use: (app: Awaited<ReturnType<typeof buildApi>>) => Promise<void>,
): Promise<void> {
  const store = new SqliteStore(':memory:', { keyring: newKeyring() });
  const app = await buildApi({
    store,
    dispatcher: new RecordingDispatcher(store),
    adminToken: ADMIN_TOKEN,
    logger: pino({ level: 'silent' }),
    registry: new Registry(),
    config: {
      allowPrivateNetworks: false,
      maxPayloadBytes: 1_024,
      maxPayloadDepth: 100,
      maxRequestBytes: 64 * 1_024,
    },
    ...options,
  });
  try {
    await app.ready();
    await use(app);
  } finally {
    await app.close();
    await store.close();
  }
}

describe('ops routes', () => {
  it('/healthz: 200 {status: ok}, no token needed', async () => {
    await withApi({ ready: () => Promise.reject(new Error('down')) }, async (app) => {
      const res = await app.inject({ method: 'GET', url: '/healthz' });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { status: 'ok' });
    });
  });

  it('/readyz: 200 while the store answers (the default check)', async () => {
    await withApi({}, async (app) => {
      const res = await app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { status: 'ready' });
    });
  });

  it('/readyz: 200 while the ready check passes, 503 while it throws, logging the error', async () => {
    let down: Error | undefined;
    let checks = 0;
    const logged: { msg: string; err?: { message: string } }[] = [];
    const logger = pino(
      { level: 'warn' },
      { write: (line: string) => logged.push(JSON.parse(line) as (typeof logged)[number]) },
    );
    const ready = async () => {
      checks++;
      if (down) throw down;
    };
    await withApi({ ready, logger }, async (app) => {
      const get = () => app.inject({ method: 'GET', url: '/readyz' });
      let res = await get();
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { status: 'ready' });

      down = new Error('redis: connection refused');
      res = await get();
      assert.equal(res.statusCode, 503, res.body);
      // A driver's message stays in the log: it may name hosts and ports.
      assert.deepEqual(res.json(), { status: 'unavailable', reason: 'a dependency did not answer' });
      const warning = logged.find((l) => l.msg === 'not ready');
      assert.equal(warning?.err?.message, 'redis: connection refused');

      down = new StoreUnavailableError('the store cannot write: its disk is full');
      res = await get();
      assert.equal(res.statusCode, 503, res.body);
      assert.deepEqual(res.json(), {
        status: 'unavailable',
        reason: 'the store cannot write: its disk is full',
      });

      down = undefined;
      res = await get();
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(checks, 4, 'every request runs the check');
    });
  });

  it("/metrics: the registry's text exposition, with its content type", async () => {
    const registry = new Registry();
    const counter = new Counter({
      name: 'sluice_test_total',
      help: 'A test counter.',
      registers: [registry],
    });
    counter.inc(3);
    await withApi({ registry }, async (app) => {
      const res = await app.inject({ method: 'GET', url: '/metrics' });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['content-type'], registry.contentType);
      assert.match(res.body, /^# HELP sluice_test_total A test counter\.$/m);
      assert.match(res.body, /^# TYPE sluice_test_total counter$/m);
      assert.match(res.body, /^sluice_test_total 3$/m);
    });
  });

  it('/metrics with SLUICE_METRICS_TOKEN: 401 without the bearer token or with another, 200 with it', async () => {
    const token = 'scrape-token-0123456789';
    await withApi(
      {
        config: {
          allowPrivateNetworks: false,
          maxPayloadBytes: 1_024,
          maxPayloadDepth: 100,
          maxRequestBytes: 64 * 1_024,
          metricsToken: token,
        },
      },
      async (app) => {
        for (const authorization of [undefined, 'Bearer wrong', token, `Bearer ${token}x`, ADMIN_TOKEN]) {
          const res = await app.inject({
            method: 'GET',
            url: '/metrics',
            headers: authorization === undefined ? {} : { authorization },
          });
          assert.equal(res.statusCode, 401, `${authorization}: ${res.body}`);
          assert.equal(res.json<{ error: { code: string } }>().error.code, 'unauthorized');
        }
        const res = await app.inject({
          method: 'GET',
          url: '/metrics',
          headers: { authorization: `Bearer ${token}` },
        });
        assert.equal(res.statusCode, 200, res.body);
        const health = await app.inject({ method: 'GET', url: '/healthz' });
        assert.equal(health.statusCode, 200, 'the probes need no token');
      },
    );
  });
});
