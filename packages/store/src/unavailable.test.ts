import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, it } from 'node:test';
import { isDiskFull, isUnavailable, StoreUnavailableError } from './unavailable.ts';

/** An error as a driver builds it: a message and own properties. */
const driverError = (message: string, props: Record<string, unknown> = {}): Error =>
  Object.assign(new Error(message), props);

/** The error of a TCP connect to a loopback port nothing listens on. */
async function refused(): Promise<Error> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return new Promise((resolve) => connect(port, '127.0.0.1').once('error', resolve));
}

describe('isUnavailable: a dependency that cannot answer now', () => {
  it('a store’s own StoreUnavailableError', () => {
    assert.ok(isUnavailable(new StoreUnavailableError('disk full')));
  });

  it('a refused connection (a real socket), alone, as a cause or in an AggregateError', async () => {
    const err = await refused();
    assert.equal((err as NodeJS.ErrnoException).code, 'ECONNREFUSED');
    assert.ok(isUnavailable(err));
    assert.ok(isUnavailable(new Error('query failed', { cause: err })));
    assert.ok(isUnavailable(new AggregateError([err], 'connect failed')));
  });

  it('node-postgres: connection, resources and shutdown SQLSTATEs, and the pool’s own messages', () => {
    for (const code of ['57P01', '57P02', '57P03', '53300', '53100', '08006', '08001']) {
      assert.ok(isUnavailable(driverError('server says no', { code, severity: 'FATAL' })), code);
    }
    for (const message of [
      'Connection terminated unexpectedly',
      'Connection terminated',
      'Connection terminated due to connection timeout',
      'timeout exceeded when trying to connect',
    ]) {
      assert.ok(isUnavailable(driverError(message)), message);
    }
  });

  it('ioredis: a closed connection, the offline queue off, too many retries, no reply in time', () => {
    assert.ok(isUnavailable(driverError('Connection is closed.')));
    assert.ok(isUnavailable(driverError('Command timed out')));
    assert.ok(isUnavailable(driverError("Stream isn't writeable and enableOfflineQueue options is false")));
    const retries = driverError('Reached the max retries per request limit (which is 20).');
    retries.name = 'MaxRetriesPerRequestError';
    assert.ok(isUnavailable(retries));
  });

  it('node:sqlite: a locked database (a real one), SQLITE_FULL, SQLITE_IOERR and its extended codes', (t) => {
    const file = join(tmpdir(), `sluice-unavailable-${process.pid}.db`);
    const a = new DatabaseSync(file);
    const b = new DatabaseSync(file, { timeout: 0 });
    t.after(() => {
      a.close();
      b.close();
      rmSync(file, { force: true });
    });
    a.exec('CREATE TABLE IF NOT EXISTS t (x); BEGIN IMMEDIATE; INSERT INTO t VALUES (1)');
    assert.throws(
      () => b.exec('BEGIN IMMEDIATE'),
      (err: unknown) => isUnavailable(err) && (err as { errcode: number }).errcode === 5,
    );
    a.exec('ROLLBACK');
    for (const errcode of [13, 10, 10 | (3 << 8), 14]) {
      assert.ok(
        isUnavailable(driverError('disk I/O error', { code: 'ERR_SQLITE_ERROR', errcode })),
        String(errcode),
      );
    }
  });

  it('everything else is not: a bug stays a bug', () => {
    assert.ok(!isUnavailable(new TypeError('undefined is not a function')));
    assert.ok(!isUnavailable(new RangeError('Maximum call stack size exceeded')));
    assert.ok(!isUnavailable(driverError('duplicate key', { code: '23505' })));
    assert.ok(!isUnavailable(driverError('syntax error', { code: '42601' })));
    assert.ok(!isUnavailable(driverError('constraint failed', { code: 'ERR_SQLITE_ERROR', errcode: 19 })));
    assert.ok(!isUnavailable(driverError('EPIPE-looking', { code: 'EP000' })));
    assert.ok(!isUnavailable('ECONNREFUSED'));
    assert.ok(!isUnavailable(null));
    const cycle = new Error('a');
    (cycle as { cause?: unknown }).cause = cycle;
    assert.ok(!isUnavailable(cycle));
  });
});

describe('isDiskFull: the store cannot write for want of room', () => {
  it("SQLite's SQLITE_FULL (a real one), Postgres's 53100 disk_full, ENOSPC, wrapped or not", () => {
    const db = new DatabaseSync(':memory:');
    db.exec('CREATE TABLE t (x BLOB)');
    const pages = Number(Object.values(db.prepare('PRAGMA page_count').get() ?? {})[0]);
    db.exec(`PRAGMA max_page_count = ${pages}`);
    const full = (() => {
      try {
        db.prepare('INSERT INTO t VALUES (randomblob(100000))').run();
      } catch (err) {
        return err;
      }
    })();
    db.close();
    assert.ok(isDiskFull(full), String(full));
    assert.ok(isUnavailable(full));
    const pg = driverError('could not extend file "base/5/16384": No space left on device', {
      code: '53100',
    });
    assert.ok(isDiskFull(pg));
    assert.ok(isDiskFull(new Error('query failed', { cause: pg })));
    assert.ok(isDiskFull(driverError('ENOSPC: no space left on device, write', { code: 'ENOSPC' })));
  });

  it('not: another outage, or a bug', () => {
    assert.ok(!isDiskFull(driverError('too many connections', { code: '53300' })));
    assert.ok(!isDiskFull(driverError('disk I/O error', { code: 'ERR_SQLITE_ERROR', errcode: 10 })));
    assert.ok(!isDiskFull(driverError('database is locked', { code: 'ERR_SQLITE_ERROR', errcode: 5 })));
    assert.ok(!isDiskFull(new StoreUnavailableError('down')));
    assert.ok(!isDiskFull(new TypeError('x')));
    assert.ok(!isDiskFull(null));
  });
});
