/**
 * Whether an error means a store or another dependency cannot answer now (down, unreachable,
 * saturated, its disk full) rather than a bug: the API answers such an error `503
 * unavailable` with `Retry-After`, and anything else `500 internal` (docs/api.md "Errors").
 * One classifier for every shape, by what the drivers throw:
 *
 * - a `StoreUnavailableError`, which a store may throw for a failure of its own;
 * - Node's socket errors (`ECONNREFUSED`, `ECONNRESET`, …), from pg and ioredis alike;
 * - node-postgres: SQLSTATE class 08 (connection exception) and 53 (insufficient resources:
 *   too many connections, disk full), 57P01–57P03 (the server shutting down, crashed,
 *   starting), and the pool's own messages (a connection ended, the connect timeout);
 * - ioredis: a closed connection, the offline queue off, `MaxRetriesPerRequestError`, no
 *   reply within `commandTimeout`;
 * - node:sqlite (`errcode`, primary result code): SQLITE_BUSY, SQLITE_FULL, SQLITE_IOERR,
 *   SQLITE_CANTOPEN.
 *
 * An `AggregateError` (Node's connect over several addresses) or an error's `cause` is
 * unavailable when one of the errors inside it is.
 */

/** A store cannot answer now; the request may be retried later as it was. */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
  readonly code = 'store_unavailable';
}

const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** SQLSTATEs of a server that cannot serve now: shutting down, crashed, starting up. */
const PG_CODES = new Set(['57P01', '57P02', '57P03']);
/** SQLSTATE classes: 08 connection exception, 53 insufficient resources. */
const PG_CLASSES = new Set(['08', '53']);

/** Primary SQLite result codes (an extended code keeps the primary one in its low byte). */
const SQLITE_BUSY = 5;
const SQLITE_IOERR = 10;
const SQLITE_FULL = 13;
const SQLITE_CANTOPEN = 14;
const SQLITE_CODES = new Set([SQLITE_BUSY, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN]);

const MESSAGES = [
  // node-postgres
  /^Connection terminated/,
  /^timeout exceeded when trying to connect/,
  /^Client has encountered a connection error and is not queryable/,
  // ioredis
  /^Connection is closed\.?$/,
  /enableOfflineQueue options is false/,
  /^Command timed out$/,
];

function isOwn(err: Record<string, unknown>): boolean {
  if (err instanceof StoreUnavailableError || err.name === 'MaxRetriesPerRequestError') return true;
  const { code, errcode, message } = err;
  if (typeof code === 'string') {
    if (SOCKET_CODES.has(code) || PG_CODES.has(code)) return true;
    if (/^[0-9A-Z]{5}$/.test(code) && PG_CLASSES.has(code.slice(0, 2))) return true;
  }
  if (code === 'ERR_SQLITE_ERROR' && typeof errcode === 'number') {
    return SQLITE_CODES.has(errcode & 0xff);
  }
  return typeof message === 'string' && MESSAGES.some((m) => m.test(message));
}

/** Whether `err`, or an error it wraps, is one `test` names. */
function anyError(err: unknown, test: (e: Record<string, unknown>) => boolean): boolean {
  // Breadth-first over `cause` and `errors`, bounded: a cycle or a huge aggregate ends it.
  const queue: unknown[] = [err];
  for (let i = 0; i < queue.length && i < 32; i++) {
    const e = queue[i];
    if (typeof e !== 'object' || e === null) continue;
    const record = e as Record<string, unknown>;
    if (test(record)) return true;
    if (record.cause !== undefined) queue.push(record.cause);
    if (Array.isArray(record.errors)) queue.push(...record.errors);
  }
  return false;
}

/** Whether `err` (or an error it wraps) means a dependency cannot answer now. */
export function isUnavailable(err: unknown): boolean {
  return anyError(err, isOwn);
}

/**
 * What `/readyz` says of a failed readiness check: a `StoreUnavailableError`'s message, which
 * is written to be shown ("the store cannot write: its disk is full", "Redis is connecting");
 * of any other error only that a dependency did not answer (a driver's message can name hosts
 * and ports, and `/readyz` needs no token). The log has the error itself.
 */
export function notReadyReason(err: unknown): string {
  return err instanceof StoreUnavailableError ? err.message : 'a dependency did not answer';
}

/** Postgres's SQLSTATE 53100 `disk_full`. */
const PG_DISK_FULL = '53100';

/**
 * Whether `err` (or an error it wraps) means the store's disk is full: SQLite's SQLITE_FULL
 * (an extended code keeps it in its low byte), Postgres's `disk_full`, or the system's ENOSPC.
 */
export function isDiskFull(err: unknown): boolean {
  return anyError(
    err,
    ({ code, errcode }) =>
      code === PG_DISK_FULL ||
      code === 'ENOSPC' ||
      (code === 'ERR_SQLITE_ERROR' && typeof errcode === 'number' && (errcode & 0xff) === SQLITE_FULL),
  );
}
