/**
 * An outage is not a bug (docs/api.md "Errors"): while the store cannot answer, the API says
 * `503 unavailable` with `Retry-After` — never `500 internal` — and after it, nothing
 * accepted is lost and what was refused can be posted again with its idempotency key.
 *
 * - distributed: Postgres is a private server this test starts (never the shared one), stopped
 *   with `pg_ctl stop -m immediate` (a crash) for 10 s: every /v1 route answers 503 with
 *   `Retry-After`; the API, the rate limiter and the delivery worker answer `/healthz` 200,
 *   `/readyz` 503 and `/metrics` 200 (the gauges' failed store reads counted); after the
 *   restart `/readyz` is 200 again within a bound and every event accepted before,
 *   during-refused-then-re-posted and after is delivered. Without the PostgreSQL server's
 *   binaries (`initdb`, `pg_ctl`) it fails, saying so.
 * - single: the store is SQLite, and its failure is the disk filling: the data dir is a small
 *   tmpfs filled with a file; writes answer 503 (`SQLITE_FULL`) and `/readyz` 503 (its probe
 *   write refused too), reads and `/healthz` still answer; with the file removed, the refused events are posted again and everything is
 *   delivered. Needs root to mount the tmpfs: skipped (loudly) where the mount fails.
 */

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseConfig } from '@sluice/config';
import { generateKeyText } from '@sluice/core';
import { dashboardBuilt } from '@sluice/dashboard';
import { startSingleBox } from '@sluice/single';
import { configSchema, isDistributed } from '@sluice/single/config';
import { startDistributedBox } from '@sluice/single/distributed';
import { encryptionKey as resolveKey } from '@sluice/single/encryption-key';
import { PostgresStore } from '@sluice/store-postgres';
import { type PrivatePostgres, startPrivatePostgres } from '@sluice/testing';
import { pino } from 'pino';
import { chromium, type Page } from 'playwright-core';
import { ROUTES } from './helpers/client.ts';
import { assertNoLeaks } from './helpers/leaks.ts';
import { type Receiver, sleep, startReceiver } from './helpers/receiver.ts';
import { deleteRedisKeys, REDIS_URL, SHAPE, tempDir } from './helpers/shape.ts';
import {
  type ApiResponse,
  type Client,
  client,
  createDestination,
  createTenant,
  type EventInput,
  waitUntil,
} from './helpers/sluice.ts';

/** The API's error body. */
type ErrorAnswer = { error: { code: string; message: string; details: unknown } };

/** A running Sluice whose store this test can take away and give back. */
interface Subject {
  url: string;
  adminToken: string;
  /** The ops servers of the processes without the API (the distributed shape's). */
  opsUrls: string[];
  /** The store stops answering (Postgres stopped; SQLite's disk full). */
  fail(): Promise<void>;
  recover(): Promise<void>;
  close(): Promise<void>;
}

const settings = (own: Record<string, string | number>) =>
  parseConfig(configSchema, {
    SLUICE_ALLOW_PRIVATE_NETWORKS: 'true',
    SLUICE_LOG_LEVEL: 'silent',
    PORT: 0,
    ...own,
  });

/** The distributed box on a private Postgres and a fresh Redis key prefix. */
async function distributedSubject(): Promise<Subject> {
  const pg: PrivatePostgres = await startPrivatePostgres();
  const dataDir = await tempDir();
  const prefix = `sluice-outage-${process.pid}-${Date.now()}`;
  const config = settings({
    DATABASE_URL: pg.url,
    REDIS_URL,
    SLUICE_REDIS_PREFIX: prefix,
    SLUICE_DATA_DIR: dataDir,
    SLUICE_ENCRYPTION_KEY: generateKeyText(),
  });
  if (!isDistributed(config)) throw new Error('both URLs are set');
  const keyring = resolveKey(dataDir, config.SLUICE_ENCRYPTION_KEY).keyring;
  const store = await PostgresStore.open(pg.url, { keyring, poolSize: 10 });
  const box = await startDistributedBox(
    { ...config, SLUICE_ENCRYPTION_KEY: keyring },
    {
      store,
      logger: pino({ level: 'silent' }),
    },
  );
  return {
    url: box.url,
    adminToken: box.adminToken,
    opsUrls: [box.opsUrls.rateLimiter, box.opsUrls.deliveryWorker],
    fail: () => pg.stop('immediate'),
    recover: () => pg.start(),
    close: async () => {
      await box.close();
      await store.close();
      await pg.remove();
      await deleteRedisKeys(prefix);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Whether a tmpfs can be mounted here (root, or CAP_SYS_ADMIN). */
async function canMount(): Promise<boolean> {
  const dir = await tempDir();
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { stdio: 'ignore' });
    execFileSync('umount', [dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Writes `file` until the disk is full (ENOSPC). */
async function fillDisk(file: string): Promise<void> {
  const handle = await open(file, 'w');
  const chunk = Buffer.alloc(256 * 1024, 1);
  try {
    for (;;) await handle.write(chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    await handle.close();
  }
}

/** The single box on a data dir that is a 32 MB tmpfs of its own. */
async function singleSubject(): Promise<Subject> {
  const mountPoint = await tempDir();
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=32m', 'tmpfs', mountPoint]);
  const dataDir = join(mountPoint, 'data');
  await mkdir(dataDir);
  const filler = join(mountPoint, 'filler');
  const box = await startSingleBox(settings({ SLUICE_DATA_DIR: dataDir }));
  return {
    url: box.url,
    adminToken: box.adminToken,
    opsUrls: [],
    fail: () => fillDisk(filler),
    recover: () => rm(filler, { force: true }),
    close: async () => {
      await box.close();
      execFileSync('umount', [mountPoint]);
      await rm(mountPoint, { recursive: true, force: true });
    },
  };
}

const mountable = SHAPE === 'single' ? await canMount() : true;
const skip = mountable ? undefined : 'cannot mount a tmpfs (not root)';
if (skip) {
  if (process.env.CI === 'true') throw new Error(`CI: the outage test cannot run: ${skip}`);
  process.stderr.write(`\n*** SKIPPING the outage test (${SHAPE}): ${skip} ***\n\n`);
}

const CHROMIUM = process.env.SLUICE_CHROMIUM ?? '/usr/bin/chromium';
const noBrowser = !existsSync(CHROMIUM)
  ? `no browser at ${CHROMIUM}`
  : !dashboardBuilt()
    ? 'the dashboard is not built'
    : undefined;
if (SHAPE === 'distributed' && noBrowser) {
  if (process.env.CI === 'true')
    throw new Error(`CI: the outage test's dashboard check cannot run: ${noBrowser}`);
  process.stderr.write(`\n*** SKIPPING the outage test's dashboard check: ${noBrowser} ***\n\n`);
}

/** The dashboard signed in with `token`, on its destinations view (which polls the API). */
async function dashboard(url: string, token: string): Promise<{ page: Page; close(): Promise<void> }> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  const page = await browser.newPage();
  await page.goto(`${url}/dashboard`);
  await page.getByLabel('Token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Destinations' }).waitFor();
  return { page, close: () => browser.close() };
}

/** The count of `sluice_api_unavailable_total` on `/metrics`. */
async function unavailableCount(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^sluice_api_unavailable_total(?:\{[^}]*\})? (\d+)$/m.exec(text)?.[1] ?? Number.NaN);
}

/** `/metrics` answers 200 with the gauges, their failed store reads counted; `/healthz` 200, `/readyz` 503. */
async function assertOpsDuringOutage(url: string): Promise<void> {
  const res = await fetch(`${url}/metrics`);
  const text = await res.text();
  assert.equal(res.status, 200, `${url}/metrics: ${text}`);
  for (const gauge of ['sluice_oldest_pending_age_seconds', 'sluice_destinations_by_health']) {
    const failed = new RegExp(`^sluice_metrics_unavailable_total\\{metric="${gauge}"\\} (\\d+)$`, 'm').exec(
      text,
    );
    assert.ok(Number(failed?.[1]) > 0, `${url}: ${gauge}'s failed reads: ${failed?.[0]}`);
  }
  assert.match(text, /^sluice_delivery_queue_depth \d+$/m, url);
  assert.match(text, /^sluice_oldest_pending_age_seconds [\d.e+-]+$/m, url);
  assert.equal((await fetch(`${url}/healthz`)).status, 200, url);
  assert.equal((await fetch(`${url}/readyz`)).status, 503, url);
}

/** A payload big enough that a few batches fill what SQLite has left of a full disk. */
const BULK = 'x'.repeat(32 * 1024);

describe(`an outage of the store (${SHAPE}): 503 then recovery, nothing lost`, { skip }, () => {
  let subject: Subject;
  let rcv: Receiver;
  let c: Client;
  let key: string;
  let tenantId: string;
  let dst: string;
  /** Event ids answered 202: each must reach the receiver. */
  const accepted = new Set<string>();
  let n = 0;

  before(async () => {
    rcv = await startReceiver();
    subject = SHAPE === 'distributed' ? await distributedSubject() : await singleSubject();
    c = client(subject.url);
    const tenant = await createTenant(c, subject.adminToken);
    key = tenant.apiKey;
    tenantId = tenant.id;
    dst = (
      await createDestination(c, key, { url: rcv.url('outage'), rateLimit: { limit: 50, period: 'second' } })
    ).id;
  });

  after(async () => {
    await c?.close();
    await subject?.close();
    await rcv?.close();
    await assertNoLeaks();
  });

  /** Posts `count` events with fresh idempotency keys; the answers, by key. */
  const post = async (
    count: number,
    payload: unknown = { n },
  ): Promise<Map<EventInput, ApiResponse<unknown>>> => {
    const events: EventInput[] = Array.from({ length: count }, () => ({
      type: 'order.created',
      payload,
      idempotencyKey: `k-${++n}`,
    }));
    const answers = new Map<EventInput, ApiResponse<unknown>>();
    await Promise.all(
      events.map(async (e) => {
        const res = await c.api<{ id: string }>('POST', '/v1/events', e, key);
        if (res.status === 202) accepted.add(res.body.id);
        answers.set(e, res);
      }),
    );
    return answers;
  };

  const assertUnavailable = (res: ApiResponse<unknown>, what: string) => {
    assert.equal(res.status, 503, `${what}: ${JSON.stringify(res.body)}`);
    const body = res.body as ErrorAnswer;
    assert.equal(body.error.code, 'unavailable', what);
    assert.deepEqual(body.error.details, { retryAfterSeconds: 5 }, what);
  };

  it('refuses with 503 while the store cannot answer, then recovers and delivers everything', async (t) => {
    // Before: accepted, some still waiting at 50/s when the store goes.
    const first = await post(100);
    for (const res of first.values()) assert.equal(res.status, 202);
    const event = [...accepted][0] as string;
    const [delivery] = (
      await c.api<{ data: { id: string }[] }>(
        'GET',
        `/v1/deliveries?destinationId=${dst}&limit=1`,
        undefined,
        key,
      )
    ).body.data;
    assert.ok(delivery);
    const path = (route: string) =>
      route.replace(
        '{id}',
        route.includes('tenants')
          ? tenantId
          : route.includes('events')
            ? event
            : route.includes('deliveries')
              ? delivery.id
              : dst,
      );
    const bodies: Record<string, unknown> = {
      'POST /v1/tenants': { name: 'another' },
      'POST /v1/destinations': { url: rcv.url('other'), rateLimit: { limit: 1, period: 'second' } },
      'PATCH /v1/destinations/{id}': { rateLimit: { limit: 40, period: 'second' } },
      'PATCH /v1/tenants/{id}': { quota: { eventsPerSecond: null } },
      'POST /v1/destinations/{id}/replay': { status: 'dead' },
      'POST /v1/events': { type: 'order.created', payload: {} },
      'POST /v1/events/batch': { events: [{ type: 'order.created', payload: {} }] },
      'POST /v1/event-types': { name: 'outage.type', description: 'made in an outage' },
      'PATCH /v1/event-types/{name}': { description: 'changed in an outage' },
    };
    const call = async (route: string) => {
      const [method, template] = route.split(' ') as [string, string];
      // The admin routes with the admin token: a tenant key would be refused (403) before the store.
      const admin =
        template.startsWith('/v1/tenants') || (template.startsWith('/v1/event-types') && method !== 'GET');
      const token = admin ? subject.adminToken : key;
      const body = bodies[route] ?? (method === 'POST' ? {} : undefined);
      const raw = await fetch(subject.url + path(template), {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: raw.status, retryAfter: raw.headers.get('retry-after'), body: await raw.json() };
    };

    const counted = await unavailableCount(subject.url);
    const browser =
      SHAPE === 'distributed' && !noBrowser ? await dashboard(subject.url, subject.adminToken) : undefined;
    t.after(() => browser?.close());
    const banner = browser?.page.getByRole('alert').filter({ hasText: '503 unavailable' });
    assert.equal(await banner?.count(), browser && 0);
    await subject.fail();
    const refused = new Set<EventInput>();
    if (SHAPE === 'distributed') {
      // Postgres is gone for 10 s, and for at least three rounds of every /v1 route (each
      // answering 503) however long a busy machine takes over a round.
      const until = Date.now() + 10_000;
      let rounds = 0;
      while (Date.now() < until || rounds < 3) {
        for (const route of ROUTES) {
          // DELETE would succeed after the restart too; it is asked last, once (below).
          if (route.startsWith('DELETE')) continue;
          const res = await call(route);
          assertUnavailable(res, route);
          assert.equal(res.retryAfter, '5', route);
        }
        for (const [e, res] of await post(5)) {
          assertUnavailable(res, 'POST /v1/events');
          refused.add(e);
        }
        // The API and the rate limiter's and delivery worker's own ops servers.
        for (const url of [subject.url, ...subject.opsUrls]) await assertOpsDuringOutage(url);
        rounds++;
        await sleep(200);
      }
      assertUnavailable(await call('DELETE /v1/destinations/{id}'), 'DELETE');
      assert.ok(rounds >= 3, `${rounds} rounds`);
      // The dashboard says so while it lasts.
      await banner?.waitFor({ timeout: 10_000 });
    } else {
      // The disk is full: writes fail once SQLite needs a page it cannot have.
      await waitUntil(
        async () => {
          for (const [e, res] of await post(10, { bulk: BULK })) {
            assert.notEqual(res.status, 500, JSON.stringify(res.body));
            if (res.status === 503) {
              assertUnavailable(res, 'POST /v1/events');
              refused.add(e);
            } else assert.equal(res.status, 202, JSON.stringify(res.body));
          }
          return refused.size > 0;
        },
        30_000,
        'a write refused on a full disk',
        0,
      );
      // Not ready while the disk is full, saying why: its probe write is refused too.
      const readyz = await fetch(`${subject.url}/readyz`);
      assert.equal(readyz.status, 503);
      assert.deepEqual(await readyz.json(), {
        status: 'unavailable',
        reason: 'the store cannot write: its disk is full',
      });
      const batch = await call('POST /v1/events/batch');
      assert.ok([202, 503].includes(batch.status), JSON.stringify(batch.body));
      // Reads still answer, and so does the process.
      assert.equal((await call('GET /v1/events/{id}')).status, 200);
      assert.equal((await fetch(`${subject.url}/healthz`)).status, 200);
      if (batch.status === 202)
        for (const e of (batch.body as { data: { id: string }[] }).data) accepted.add(e.id);
    }
    assert.ok(refused.size > 0);
    // Every 503 is counted, and /metrics answers even while the store does not.
    assert.ok((await unavailableCount(subject.url)) >= counted + refused.size);

    await subject.recover();
    const started = Date.now();
    await waitUntil(
      async () => (await fetch(`${subject.url}/readyz`)).status === 200,
      30_000,
      '/readyz 200 again',
      100,
    );
    // The pools reconnect by themselves: the refused events are taken with their keys.
    await waitUntil(
      async () => (await c.api('GET', `/v1/events/${event}`, undefined, key)).status === 200,
      30_000,
      'the API answering again',
      100,
    );
    const ready = Date.now() - started;
    // The dashboard's next poll clears the banner.
    await banner?.waitFor({ state: 'detached', timeout: 15_000 });
    for (const e of refused) {
      const res = await c.api<{ id: string }>('POST', '/v1/events', e, key);
      assert.equal(res.status, 202, JSON.stringify(res.body));
      accepted.add(res.body.id);
    }
    for (const res of (await post(20)).values()) assert.equal(res.status, 202);
    // A re-post of an event accepted before the outage is the first answer, not a new event.
    const [earlier, answer] = [...first][0] as [EventInput, ApiResponse<unknown>];
    const again = await c.api<{ id: string }>('POST', '/v1/events', earlier, key);
    assert.equal(again.status, 202);
    assert.equal(again.body.id, (answer.body as { id: string }).id);

    const delivered = () => rcv.deliveredIds(rcv.path('outage'));
    await waitUntil(
      () => [...accepted].every((id) => delivered().has(id)),
      60_000,
      `every accepted event delivered (${accepted.size}; ready again after ${ready} ms)`,
      200,
    );
    const unknown = [...delivered()].filter((id) => !accepted.has(id));
    assert.deepEqual(unknown, [], 'nothing delivered that was not accepted');
  });
});
