import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { common, distributed, int, parseConfig } from '@sluice/config';
import { generateKeyText, newKeyring } from '@sluice/core';
import { cleanup, connect, REDIS_URL, redisAvailable, uniquePrefix } from '@sluice/redis/testing';
import { SqliteStore } from '@sluice/store-sqlite';
import { z } from 'zod';
import { openDistributedProcess } from './distributed-process.ts';

const skip = !(await redisAvailable());

/** A distributed service's settings, as each service's schema has them. */
const schema = z.object({ ...common, ...distributed, PORT: int(0, 65_535).default(0) });

describe('openDistributedProcess', { skip }, () => {
  it('serves the ops endpoints over the shared state, with the gauges every service shows', async () => {
    const prefix = uniquePrefix();
    const config = parseConfig(schema, {
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/unused',
      REDIS_URL,
      SLUICE_REDIS_PREFIX: prefix,
      SLUICE_ENCRYPTION_KEY: generateKeyText(),
    });
    const store = new SqliteStore(':memory:', { keyring: newKeyring() });
    const base = await openDistributedProcess(config, { store, clock: Date.now, inFlight: () => 7 });
    const ops = await base.serveOps();
    try {
      await base.ready();
      assert.equal((await fetch(`${ops.url}/healthz`)).status, 200);
      assert.equal((await fetch(`${ops.url}/readyz`)).status, 200);
      const metrics = await (await fetch(`${ops.url}/metrics`)).text();
      assert.match(metrics, /^sluice_scheduled_destinations 0$/m);
      assert.match(metrics, /^sluice_deliveries_in_flight 7$/m);
      assert.match(metrics, /^sluice_destinations_by_health\{/m);
    } finally {
      await ops.close();
      await base.close();
      await store.close();
      const redis = connect();
      await cleanup(redis, prefix);
      redis.disconnect();
    }
  });
});
