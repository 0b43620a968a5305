import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { newId, newKeyring } from '@sluice/core';
import { newDestination, storeConformance } from '@sluice/store/conformance';
import { migrate } from './migrate.ts';
import { SqliteStore } from './sqlite-store.ts';

const T0 = 1_700_000_000_000;
/** One keyring for the file's life: a store opened again on a file must open its secrets. */
const keyring = newKeyring();

function tempDir(): { dir: string; file: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-store-'));
  return { dir, file: join(dir, 'sluice.db'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * SQLite's own full disk: the file may not grow past the pages it has (`max_page_count`),
 * so a write that needs a page fails with SQLITE_FULL, as it does when the disk is full.
 */
function fillDisk(store: SqliteStore): () => Promise<void> {
  const pragma = (name: string) => Number(Object.values(store.db.prepare(`PRAGMA ${name}`).get() ?? {})[0]);
  const limit = pragma('max_page_count');
  store.db.exec(`PRAGMA max_page_count = ${pragma('page_count')}`);
  return async () => {
    store.db.exec(`PRAGMA max_page_count = ${limit}`);
  };
}

storeConformance('SqliteStore', async () => {
  const tmp = tempDir();
  const store = new SqliteStore(tmp.file, { keyring });
  return {
    store,
    cleanup: async () => {
      await store.close();
      tmp.remove();
    },
    rawSecrets: async (id) =>
      (store.db.prepare('SELECT secrets FROM destinations WHERE id = ?').get(id) as { secrets: string })
        .secrets,
    rawAuth: async (id) =>
      (store.db.prepare('SELECT auth FROM destinations WHERE id = ?').get(id) as { auth: string | null })
        .auth,
    fillDisk: async () => fillDisk(store),
  };
});

const MIGRATION_VERSIONS = readdirSync(new URL('../migrations/', import.meta.url))
  .filter((f) => /^\d{4}_.+\.sql$/.test(f))
  .sort()
  .map((f) => Number(f.slice(0, 4)));

describe('SqliteStore on its file', () => {
  let tmp: ReturnType<typeof tempDir>;
  const opened: { close(): unknown }[] = [];

  beforeEach(() => {
    tmp = tempDir();
  });
  afterEach(async () => {
    for (const db of opened.splice(0)) await db.close();
    tmp.remove();
  });

  const open = (): SqliteStore => {
    const store = new SqliteStore(tmp.file, { keyring });
    opened.push(store);
    return store;
  };

  it('records each migration in schema_migrations, and a second open does not re-run them', async () => {
    assert.deepEqual(MIGRATION_VERSIONS.slice(0, 1), [1]);
    const recorded = (store: SqliteStore) =>
      store.db.prepare('SELECT version, applied_at FROM schema_migrations ORDER BY version').all();
    const first = open();
    const before = recorded(first);
    assert.deepEqual(
      before.map((r) => r.version),
      MIGRATION_VERSIONS,
    );
    await first.createTenant({ id: newId('ten'), name: 'Acme', createdAt: T0 }, 'hash');
    await first.close();

    const second = open();
    assert.deepEqual(recorded(second), before, 'nothing applied again');
    assert.deepEqual(migrate(second.db), [], 'migrate on a migrated file applies nothing');
    assert.equal((await second.keyByHash('hash'))?.tenant.name, 'Acme', 'the data survived');
  });

  it('0003 numbers the deliveries already there per destination, in insertion order', () => {
    const db = new DatabaseSync(tmp.file);
    opened.push(db);
    // The file as the migrations before 0003 left it, with deliveries of two destinations.
    db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
    for (const file of ['0001_init.sql', '0002_replay_and_retention.sql']) {
      db.exec(readFileSync(new URL(`../migrations/${file}`, import.meta.url), 'utf8'));
      db.prepare('INSERT INTO schema_migrations VALUES (?, 0)').run(Number(file.slice(0, 4)));
    }
    const [a, b] = ['dst_a', 'dst_b'];
    db.exec(`INSERT INTO tenants VALUES ('ten_1', 'acme', 'h', 0)`);
    for (const d of [a, b]) {
      db.prepare(
        `INSERT INTO destinations (id, tenant_id, url, rate_limit, rate_period, event_types, retry_max_attempts,
           retry_initial_delay_ms, retry_max_delay_ms, timeout_ms, secrets, state, created_at, updated_at)
         VALUES (?, 'ten_1', 'https://example.test', 10, 'second', '["*"]', 3, 0, 0, 1000, '[]', 'active', 0, 0)`,
      ).run(d);
    }
    [a, b, a, a, b].forEach((d, n) => {
      db.prepare(
        `INSERT INTO deliveries (id, event_id, destination_id, tenant_id, status, next_attempt_at, created_at,
           updated_at)
         VALUES (?, ?, ?, 'ten_1', 'pending', 0, 0, 0)`,
      ).run(`dlv_${n}`, `evt_${n}`, d);
    });
    assert.deepEqual(migrate(db), MIGRATION_VERSIONS.slice(2));
    const rows = db.prepare('SELECT destination_id, sequence FROM deliveries ORDER BY rowid').all();
    assert.deepEqual(
      rows.map((r) => [r.destination_id, r.sequence]),
      [
        [a, 1],
        [b, 1],
        [a, 2],
        [a, 3],
        [b, 2],
      ],
    );
    const next = db.prepare('SELECT id, next_sequence, ordering FROM destinations ORDER BY id').all();
    assert.deepEqual(
      next.map((r) => [r.id, r.next_sequence, r.ordering]),
      [
        [a, 4, 'none'],
        [b, 3, 'none'],
      ],
    );
  });

  it('accepts made in one turn of the event loop share one commit; a failing one leaves the others', async () => {
    const store = open();
    const tenantId = newId('ten');
    await store.createTenant({ id: tenantId, name: 'Acme', createdAt: T0 }, 'hash');
    const { id: destinationId } = await store.createDestination(
      newDestination(tenantId, { name: null, url: 'https://hooks.example.com/in' }),
      T0,
    );
    const event = (key: string | null, type = 'order.paid') => ({
      type,
      payload: '{}',
      idempotencyKey: key,
      destinationIds: [destinationId],
    });
    const commits: string[] = [];
    const exec = store.db.exec.bind(store.db);
    store.db.exec = (sql: string) => {
      if (sql === 'COMMIT') commits.push(sql);
      return exec(sql);
    };
    const calls = [
      store.acceptEvents(tenantId, [event('a'), event(null)], T0),
      // NOT NULL fails inside the second event: this call's first event must go too.
      store.acceptEvents(tenantId, [event('b'), event(null, null as unknown as string)], T0),
      store.acceptEvents(tenantId, [event('a')], T0),
    ];
    const [first, failed, repeat] = await Promise.allSettled(calls);
    store.db.exec = exec;
    assert.equal(commits.length, 1, 'one commit for the three calls');
    assert.equal(failed?.status, 'rejected');
    assert.ok(first?.status === 'fulfilled' && repeat?.status === 'fulfilled');
    assert.equal(repeat.value[0]?.event.id, first.value[0]?.event.id, 'the key answers the first');
    const keys = store.db.prepare('SELECT idempotency_key FROM events ORDER BY rowid').all();
    assert.deepEqual(
      keys.map((r) => r.idempotency_key),
      ['a', null],
      'the failed call left nothing, the others everything',
    );
    assert.equal(await store.acceptEvents(tenantId, [event('c')], T0).then((r) => r.length), 1);
  });

  it('runs in WAL mode', () => {
    const store = open();
    assert.equal(store.db.prepare('PRAGMA journal_mode').get()?.journal_mode, 'wal');
  });

  it('the claim queries read their partial indexes in claim order, without a sort (due, fifo)', async () => {
    const store = open();
    const tenant = { id: newId('ten'), name: 'Acme', createdAt: T0 };
    await store.createTenant(tenant, 'hash');
    const destination = await store.createDestination(
      newDestination(tenant.id, { name: null, url: 'https://hooks.example.com/in' }),
      T0,
    );
    const events = Array.from({ length: 50 }, (_, i) => ({
      type: 'order.created',
      payload: `{"n":${i}}`,
      idempotencyKey: null,
      destinationIds: [destination.id],
    }));
    await store.acceptEvents(tenant.id, events, T0);
    assert.equal((await store.claimDue(destination.id, 10, T0)).deliveries.length, 10);
    assert.equal((await store.claimDue(destination.id, 10, T0, 'sequence')).deliveries.length, 10);

    // The statements the store ran, as it prepared them (not copies of their text).
    const statements = [...(store as unknown as { cache: Map<string, StatementSync> }).cache.keys()];
    const claims = statements.filter((sql) => /^\s*SELECT[\s\S]*next_attempt_at <= \?/.test(sql));
    assert.equal(
      claims.length,
      3,
      `the due claim and fifo's two reads among ${statements.length} statements`,
    );
    for (const sql of claims) {
      const plan = store.db
        .prepare(`EXPLAIN QUERY PLAN ${sql}`)
        .all(destination.id, T0, 10)
        .map((r) => String(r.detail));
      const index = /ORDER BY d\.next_attempt_at/.test(sql) ? 'deliveries_due' : 'deliveries_sequence';
      assert.ok(
        plan.some((detail) => detail.includes(`USING INDEX ${index}`)),
        `plan uses ${index}:\n${plan.join('\n')}\n${sql}`,
      );
      assert.ok(!plan.some((detail) => /TEMP B-TREE/.test(detail)), `no sort:\n${plan.join('\n')}`);
    }
  });

  it('two stores on one file both work', async () => {
    const a = open();
    const b = open();
    const tenant = {
      id: newId('ten'),
      name: 'Acme',
      createdAt: T0,
      quota: { eventsPerSecond: null, pendingEvents: null },
    };
    await a.createTenant(tenant, 'hash');
    assert.deepEqual(await b.getTenant(tenant.id), tenant);
  });

  it('a store opening while another holds the write lock waits, then skips the done migrations', async () => {
    // A first process: the file exists in WAL mode and someone is writing.
    const holder = new DatabaseSync(tmp.file);
    opened.push(holder);
    holder.exec('PRAGMA journal_mode = WAL');
    holder.exec('BEGIN IMMEDIATE');

    const moduleUrl = new URL('./sqlite-store.ts', import.meta.url).href;
    const openers = [newId('ten'), newId('ten')].map((tenantId) =>
      openInWorker(moduleUrl, tmp.file, tenantId),
    );
    await Promise.all(openers.map((o) => o.started));
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(
      openers.map((o) => o.state()),
      ['waiting', 'waiting'],
      'both wait for the lock',
    );

    holder.exec('ROLLBACK');
    const tenants = await Promise.all(openers.map((o) => o.done));
    const check = open();
    assert.deepEqual(
      check.db
        .prepare('SELECT version FROM schema_migrations ORDER BY version')
        .all()
        .map((r) => r.version),
      MIGRATION_VERSIONS,
    );
    for (const id of tenants) assert.equal((await check.getTenant(id))?.id, id);
  });
});

/**
 * Opens a SqliteStore on `file` in a worker thread (a separate connection that blocks on the
 * lock without blocking this thread), creates a tenant with it, and closes it.
 */
function openInWorker(moduleUrl: string, file: string, tenantId: string) {
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     (async () => {
       const { SqliteStore } = await import(workerData.moduleUrl);
       parentPort.postMessage('started');
       const store = new SqliteStore(workerData.file, { keyring: workerData.keyring });
       await store.createTenant({ id: workerData.tenantId, name: 'w', createdAt: 1 }, workerData.tenantId);
       await store.close();
       parentPort.postMessage('done');
     })().catch((err) => parentPort.postMessage({ error: String(err && err.stack || err) }));`,
    { eval: true, workerData: { moduleUrl, file, tenantId, keyring } },
  );
  let state: 'starting' | 'waiting' | 'done' | 'failed' = 'starting';
  let onStarted: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    onStarted = resolve;
  });
  const done = new Promise<string>((resolve, reject) => {
    worker.on('message', (message: unknown) => {
      if (message === 'started') {
        state = 'waiting';
        onStarted();
      } else if (message === 'done') {
        state = 'done';
        resolve(tenantId);
      } else {
        state = 'failed';
        reject(new Error(`worker failed: ${JSON.stringify(message)}`));
      }
    });
    worker.on('error', reject);
  }).finally(() => worker.terminate());
  done.catch(() => {}); // awaited by the test; never an unhandled rejection meanwhile
  return { started, done, state: () => state };
}
