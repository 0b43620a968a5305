import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { common, distributed, int, parseConfig } from '@sluice/config';
import { generateKeyText, newKeyring } from '@sluice/core';
import { StoreUnavailableError } from '@sluice/store';
import { SqliteStore } from '@sluice/store-sqlite';
import { cleanup, connect, REDIS_URL, requireRedis, uniquePrefix } from '@sluice/testing';
import { z } from 'zod';
import { openDistributedProcess } from './distributed-process.ts';

await requireRedis();

/** A distributed service's settings, as each service's schema has them. */
const schema = z.object({ ...common, ...distributed, PORT: int(0, 65_535).default(0) });

/** A process on a fresh prefix and an in-memory store, its ops server, closed after `body`. */
async function withProcess(
  body: (store: SqliteStore, url: string, ready: () => Promise<void>) => Promise<void>,
) {
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
    await body(store, ops.url, base.ready);
  } finally {
    await ops.close();
    await base.close();
    await store.close();
    const redis = connect();
    await cleanup(redis, prefix);
    redis.disconnect();
  }
}

describe('openDistributedProcess', () => {
  it('serves the ops endpoints over the shared state, with the gauges every service shows', async () => {
    await withProcess(async (_store, url, ready) => {
      await ready();
      assert.equal((await fetch(`${url}/healthz`)).status, 200);
      assert.equal((await fetch(`${url}/readyz`)).status, 200);
      const metrics = await (await fetch(`${url}/metrics`)).text();
      assert.match(metrics, /^sluice_scheduled_destinations 0$/m);
      assert.match(metrics, /^sluice_deliveries_in_flight 7$/m);
      assert.match(metrics, /^sluice_destinations_by_health\{/m);
    });
  });

  it('while the store cannot answer: /metrics 200 with the last values and the failed reads counted', async () => {
    await withProcess(async (store, url) => {
      const scrape = async () => {
        const res = await fetch(`${url}/metrics`);
        assert.equal(res.status, 200);
        return res.text();
      };
      const failed = (text: string, metric: string) =>
        Number(
          new RegExp(`^sluice_metrics_unavailable_total\\{metric="${metric}"\\} (\\d+)$`, 'm').exec(
            text,
          )?.[1],
        );
      const before = await scrape();
      assert.match(before, /^sluice_destinations_by_health\{state="healthy"\} 0$/m);
      assert.equal(failed(before, 'sluice_oldest_pending_age_seconds'), 0);
      // The store's reads fail as a stopped Postgres' do.
      const down = () => Promise.reject(new StoreUnavailableError('connect ECONNREFUSED'));
      Object.assign(store, { ping: down, healthCounts: down, oldestDueAt: down });
      const during = await scrape();
      assert.match(during, /^sluice_destinations_by_health\{state="healthy"\} 0$/m);
      assert.match(during, /^sluice_oldest_pending_age_seconds 0$/m);
      assert.match(during, /^sluice_deliveries_in_flight 7$/m);
      assert.equal(failed(during, 'sluice_oldest_pending_age_seconds'), 1);
      assert.equal(failed(during, 'sluice_destinations_by_health'), 1);
      assert.equal(failed(during, 'sluice_deliveries_in_flight'), 0);
      assert.equal((await fetch(`${url}/healthz`)).status, 200);
      assert.equal((await fetch(`${url}/readyz`)).status, 503);
    });
  });
});
