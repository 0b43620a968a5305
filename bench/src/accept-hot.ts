/**
 * Ingest into one hot destination on Postgres (docs/adr/0006): `clients` concurrent loops,
 * each accepting one single-event batch after another through `PostgresStore.acceptEvents`
 * (what `POST /v1/events` does after validation), for `seconds`; accepts per second, into ONE
 * destination and spread over `clients` destinations, `runs` times each, and the medians.
 * The store has the API service's pool (`SLUICE_PG_POOL_SIZE`, default 10). Not a test and
 * not part of `npm run bench`: a tool to compare two versions of the accept path.
 *
 *   node bench/src/accept-hot.ts [--runs 5] [--seconds 5] [--clients 32] [--pool 10] [--store <path>]
 *
 * `--store`: another version's `packages/store-postgres/src/index.ts` (e.g. extracted with
 * `git archive <ref> packages/store-postgres`, beside a `node_modules` link to this checkout's),
 * to measure before and after in one session.
 *
 * Needs Postgres at BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test);
 * each run has its own schema, dropped at the end.
 */

import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { newKeyring } from '@sluice/core';
import type { PostgresStore as Store } from '@sluice/store-postgres';
import pg from 'pg';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '5' },
    clients: { type: 'string', default: '32' },
    pool: { type: 'string', default: '10' },
    store: { type: 'string', default: '@sluice/store-postgres' },
  },
});
const { PostgresStore } = (await import(values.store)) as { PostgresStore: typeof Store };
const RUNS = Number(values.runs);
const SECONDS = Number(values.seconds);
const CLIENTS = Number(values.clients);
const POOL = Number(values.pool);
const keyring = newKeyring();
const URL_ = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: URL_ });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Accepts per second with `CLIENTS` loops; `spread`: each loop has its own destination. */
async function run(spread: boolean): Promise<number> {
  const schema = `bench_accept_${randomBytes(4).toString('hex')}`;
  const store = await PostgresStore.open(URL_, { keyring, schema, poolSize: POOL });
  try {
    const now = Date.now();
    const tenant = { id: `ten_${randomBytes(8).toString('hex')}`, name: 'bench', createdAt: now };
    await store.createTenant(tenant, `hash-${tenant.id}`);
    const destinations: string[] = [];
    for (let i = 0; i < (spread ? CLIENTS : 1); i++) {
      const d = await store.createDestination(
        {
          id: `dst_${randomBytes(8).toString('hex')}`,
          tenantId: tenant.id,
          name: null,
          url: 'https://hooks.example.com/in',
          rateLimit: { limit: 100, period: 'second' },
          maxConcurrency: null,
          adaptive: false,
          ordering: 'none',
          eventTypes: ['*'],
          retry: { maxAttempts: 3, initialDelayMs: 1_000, maxDelayMs: 60_000 },
          timeoutMs: 15_000,
          headers: {},
          auth: null,
          tls: null,
          filter: null,
          transform: null,
          secrets: [{ secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', expiresAt: null }],
        },
        now,
      );
      destinations.push(d.id);
    }
    const payload = JSON.stringify({ bench: { pad: 'x'.repeat(480) } });
    // Warm the pool's connections and the plans.
    await Promise.all(
      Array.from({ length: POOL }, (_, i) =>
        store.acceptEvents(
          tenant.id,
          [
            {
              type: 'warm',
              payload,
              idempotencyKey: null,
              destinationIds: [destinations[i % destinations.length] as string],
            },
          ],
          Date.now(),
        ),
      ),
    );
    let accepted = 0;
    const start = performance.now();
    const end = start + SECONDS * 1_000;
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        const destinationIds = [destinations[c % destinations.length] as string];
        while (performance.now() < end) {
          await store.acceptEvents(
            tenant.id,
            [{ type: 'bench', payload, idempotencyKey: null, destinationIds }],
            Date.now(),
          );
          accepted++;
        }
      }),
    );
    return accepted / ((performance.now() - start) / 1_000);
  } finally {
    await store.close();
    await admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

const one: number[] = [];
const spread: number[] = [];
for (let r = 0; r < RUNS; r++) {
  one.push(await run(false));
  spread.push(await run(true));
  console.log(
    `run ${r + 1}: one destination ${one.at(-1)?.toFixed(0)}/s, spread ${spread.at(-1)?.toFixed(0)}/s`,
  );
}
console.log(
  `${CLIENTS} clients, pool ${POOL}, ${SECONDS} s × ${RUNS} runs — median accepts/s: one destination ${median(one).toFixed(0)}, spread over ${CLIENTS} destinations ${median(spread).toFixed(0)}`,
);
