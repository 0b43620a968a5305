/**
 * An outage of Redis is not a bug either (docs/operations.md "Outages"): the distributed
 * cluster runs on a Redis server of this test's own, killed mid-run and started again empty
 * on the same port.
 *
 * - While it is gone, a request that needs Redis (an ingest that takes from the tenant's
 *   events-a-second bucket, a destination's live stats) answers `503 unavailable` with
 *   `Retry-After` promptly — the API's connection holds no command for a reconnection — and
 *   `/readyz` 503, `/healthz` 200, `/metrics` 200 on every process. An ingest that needs only
 *   the store (no rate quota) is accepted (202): its wake is repaired by the sweeper.
 * - After it, every event accepted before, during and after is delivered, half of the refused
 *   ones are posted again with their idempotency keys and taken, and nothing is delivered
 *   that was not accepted: a 503 accepted nothing.
 *
 * The bound on the 503 (3 s, for about 0.1 s measured) is wide: ioredis' own retries held
 * these requests for over a minute. Distributed shape only; without a `redis-server` binary
 * it fails, saying so.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type PrivateRedis, startPrivateRedis } from '@sluice/testing';
import { type Cluster, startCluster } from './helpers/cluster.ts';
import { assertNoLeaks } from './helpers/leaks.ts';
import { type Receiver, sleep, startReceiver } from './helpers/receiver.ts';
import { SHAPE } from './helpers/shape.ts';
import { createDestination, createTenant, type EventInput, waitUntil } from './helpers/sluice.ts';

const skip = SHAPE !== 'distributed' && 'distributed shape only (SLUICE_TEST_SHAPE=distributed)';

/** The longest a request may take to answer while Redis is gone. */
const PROMPT_MS = 3_000;

interface Answer {
  status: number;
  retryAfter: string | null;
  body: { id?: string; error?: { code: string } };
  ms: number;
}

describe('an outage of Redis: a prompt 503, then recovery, nothing lost', { skip }, () => {
  it('answers 503 with Retry-After at once while Redis is gone, then delivers everything accepted', {
    timeout: 5 * 60_000,
  }, async (t) => {
    const redis: PrivateRedis = await startPrivateRedis();
    const rcv: Receiver = await startReceiver();
    let c: Cluster | undefined;
    try {
      c = await startCluster({
        limiters: 1,
        workers: 1,
        env: { REDIS_URL: redis.url, SLUICE_SWEEP_INTERVAL_MS: '500' },
      });
      const cluster = c;
      // This test's own connections to the Redis it kills: their reconnection errors are expected.
      cluster.redis.on('error', () => {});
      for (const queue of cluster.queues) queue.on('error', () => {});
      const call = async (method: string, path: string, token: string, body?: unknown): Promise<Answer> => {
        const started = performance.now();
        const res = await fetch(cluster.url + path, {
          method,
          headers: {
            authorization: `Bearer ${token}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal: AbortSignal.timeout(120_000),
        });
        const json = res.headers.get('content-type')?.startsWith('application/json');
        const text = await res.text();
        return {
          status: res.status,
          retryAfter: res.headers.get('retry-after'),
          body: json ? JSON.parse(text) : {},
          ms: performance.now() - started,
        };
      };
      // `quota` takes from its events-a-second bucket in Redis; `free` has no rate quota.
      const quota = await createTenant(cluster, cluster.adminToken, 'quota');
      const free = await createTenant(cluster, cluster.adminToken, 'free');
      const patched = await call('PATCH', `/v1/tenants/${quota.id}`, cluster.adminToken, {
        quota: { eventsPerSecond: 1_000 },
      });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      const limit = { limit: 50, period: 'second' };
      const dst = await createDestination(cluster, quota.apiKey, { url: rcv.url('quota'), rateLimit: limit });
      await createDestination(cluster, free.apiKey, { url: rcv.url('free'), rateLimit: limit });

      const accepted = new Set<string>();
      let n = 0;
      const post = async (key: string, event: EventInput = { type: 'outage.redis', payload: { n: ++n } }) => {
        const res = await call('POST', '/v1/events', key, {
          ...event,
          idempotencyKey: `k-${JSON.stringify(event.payload)}`,
        });
        if (res.status === 202) accepted.add(res.body.id as string);
        return { event, res };
      };
      for (let i = 0; i < 20; i++) {
        for (const key of [quota.apiKey, free.apiKey]) assert.equal((await post(key)).res.status, 202);
      }

      await redis.kill();
      const assertPrompt503 = (res: Answer, what: string) => {
        assert.equal(res.status, 503, `${what}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.error?.code, 'unavailable', what);
        assert.equal(res.retryAfter, '5', what);
        assert.ok(res.ms <= PROMPT_MS, `${what}: answered after ${Math.round(res.ms)} ms`);
      };
      const refused: EventInput[] = [];
      let slowest = 0;
      const until = Date.now() + 5_000;
      while (Date.now() < until) {
        const { event, res } = await post(quota.apiKey);
        assertPrompt503(res, 'POST /v1/events (rate quota)');
        refused.push(event);
        slowest = Math.max(slowest, res.ms);
        const stats = await call('GET', `/v1/destinations/${dst.id}/stats`, quota.apiKey);
        assertPrompt503(stats, 'GET /v1/destinations/{id}/stats');
        slowest = Math.max(slowest, stats.ms);
        const taken = (await post(free.apiKey)).res;
        assert.equal(taken.status, 202, `POST /v1/events (no rate quota): ${JSON.stringify(taken.body)}`);
        assert.ok(taken.ms <= PROMPT_MS, `POST /v1/events (no rate quota): ${Math.round(taken.ms)} ms`);
        const ready = await call('GET', '/readyz', '');
        assert.equal(ready.status, 503);
        assert.ok(ready.ms <= PROMPT_MS, `/readyz: ${Math.round(ready.ms)} ms`);
        assert.equal((await call('GET', '/healthz', '')).status, 200);
        await sleep(200);
      }
      assert.ok(refused.length >= 3, `${refused.length} refused`);
      // A change that could not be announced is refused before it commits: the 503 changed nothing.
      const change = await call('PATCH', `/v1/destinations/${dst.id}`, quota.apiKey, {
        rateLimit: { limit: 7, period: 'second' },
      });
      assertPrompt503(change, 'PATCH /v1/destinations/{id}');
      const kept = await call('GET', `/v1/destinations/${dst.id}`, quota.apiKey);
      assert.equal(kept.status, 200);
      assert.equal(
        (kept.body as { rateLimit: { limit: number } }).rateLimit.limit,
        limit.limit,
        'the limit unchanged',
      );
      // The gauges that read Redis keep their last values; the scrape itself answers.
      assert.equal((await call('GET', '/metrics', '')).status, 200);
      t.diagnostic(
        `with Redis gone: ${refused.length} ingests refused, slowest 503 ${Math.round(slowest)} ms`,
      );

      await redis.start();
      const restarted = Date.now();
      await waitUntil(
        async () => (await call('GET', '/readyz', '')).status === 200,
        30_000,
        '/readyz 200 again',
        100,
      );
      // Half of the refused events are posted again with their keys: taken now.
      for (const event of refused.filter((_e, i) => i % 2 === 0)) {
        const again = await post(quota.apiKey, event);
        assert.equal(again.res.status, 202, JSON.stringify(again.res.body));
      }
      for (let i = 0; i < 10; i++) assert.equal((await post(quota.apiKey)).res.status, 202);
      t.diagnostic(`ready again ${Date.now() - restarted} ms after Redis restarted`);

      const delivered = () =>
        new Set([...rcv.deliveredIds(rcv.path('quota')), ...rcv.deliveredIds(rcv.path('free'))]);
      await waitUntil(
        () => [...accepted].every((id) => delivered().has(id)),
        120_000,
        `every accepted event delivered (${accepted.size})`,
        200,
      );
      const unknown = [...delivered()].filter((id) => !accepted.has(id));
      assert.deepEqual(unknown, [], 'nothing delivered that was not accepted');
    } catch (err) {
      if (c) (err as Error).message += `\n--- api\n${c.apiProcess.logs.slice(-15).join('\n')}`;
      throw err;
    } finally {
      await c?.close();
      await rcv.close();
      await redis.stop();
      await assertNoLeaks();
    }
  });
});
