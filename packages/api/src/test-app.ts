/**
 * The API as the route tests drive it: `buildApi` over a real SQLite store in memory, no
 * server and no port (`app.inject`, a few milliseconds a request). The delivery side is a
 * dispatcher that records what the API tells it (woken, created, changed) and delivers
 * nothing; tests that need delivery outcomes write them through the store, as a delivery
 * worker would (`settle`).
 */

import assert from 'node:assert/strict';
import type { ErrorBody } from '@sluice/client';
import { newId, newKeyring } from '@sluice/core';
import type { Destination } from '@sluice/store';
import { SqliteStore } from '@sluice/store-sqlite';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { buildApi } from './app.ts';
import type { ApiConfig, ApiOptions, App, Dispatcher, RuntimeStats } from './context.ts';

export const ADMIN_TOKEN = `sa_${'a'.repeat(43)}`;

/** What the API told the delivery side, in order. */
export class RecordingDispatcher implements Dispatcher {
  readonly woken: string[] = [];
  readonly created: string[] = [];
  readonly changed: string[] = [];
  readonly #store: SqliteStore;

  constructor(store: SqliteStore) {
    this.#store = store;
  }

  /** Absent: woken after each commit (the single box's way); a test sets it to wake ahead. */
  wakeAhead?: Dispatcher['wakeAhead'];

  wake(destinationId: string): void {
    this.woken.push(destinationId);
  }

  async destinationCreated(destinationId: string): Promise<void> {
    this.created.push(destinationId);
  }

  checkAnnounce(): void {}

  async destinationChanged(destinationId: string): Promise<void> {
    this.changed.push(destinationId);
  }

  async runtimeStats(destinationId: string): Promise<RuntimeStats> {
    const destination = await this.#store.getDestination(destinationId);
    return { queued: 0, inFlight: 0, effectiveLimit: destination?.rateLimit.limit ?? 0, backingOff: false };
  }

  destination(destinationId: string): Promise<Destination | undefined> {
    return this.#store.getDestination(destinationId);
  }
}

export interface Request {
  /** Sent as `authorization: Bearer <token>`; none when absent. */
  token?: string;
  /** Sent as JSON. */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface TestApi {
  app: App;
  store: SqliteStore;
  dispatcher: RecordingDispatcher;
  registry: Registry;
  inject(method: InjectOptions['method'], url: string, request?: Request): Promise<LightMyRequestResponse>;
  /** A new tenant: its id and API key. */
  tenant(name?: string): Promise<{ id: string; key: string }>;
  close(): Promise<void>;
}

export async function testApi(
  config: Partial<ApiConfig> = {},
  options: Pick<ApiOptions, 'quotas' | 'clock'> = {},
): Promise<TestApi> {
  const store = new SqliteStore(':memory:', { keyring: newKeyring() });
  const dispatcher = new RecordingDispatcher(store);
  const registry = new Registry();
  const app = await buildApi({
    store,
    dispatcher,
    adminToken: ADMIN_TOKEN,
    logger: pino({ level: 'silent' }),
    registry,
    config: {
      allowPrivateNetworks: false,
      maxPayloadBytes: 1_024,
      maxPayloadDepth: 100,
      maxRequestBytes: 64 * 1_024,
      ...config,
    },
    ...options,
  });
  await app.ready();
  const inject: TestApi['inject'] = (method, url, { token, body, headers } = {}) =>
    app.inject({
      method,
      url,
      headers: { ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), ...headers },
      ...(body === undefined ? {} : { payload: body as InjectOptions['payload'] }),
    });
  let tenants = 0;
  return {
    app,
    store,
    dispatcher,
    registry,
    inject,
    tenant: async (name = `tenant-${++tenants}`) => {
      const res = await inject('POST', '/v1/tenants', { token: ADMIN_TOKEN, body: { name } });
      assert.equal(res.statusCode, 201, res.body);
      const { id, apiKey } = res.json<{ id: string; apiKey: string }>();
      return { id, key: apiKey };
    },
    close: async () => {
      await app.close();
      await store.close();
    },
  };
}

/** A destination that takes every event: the least a create needs. */
export const DESTINATION = {
  url: 'https://hooks.example.com/orders',
  rateLimit: { limit: 10, period: 'second' },
} as const;

/**
 * The answer is the API's error envelope, exactly `{error: {code, message, details}}`, with
 * this status and code; for `validation_failed`, `details` names each problem by `path`
 * with a machine-readable `code` where the schema gave one. Returns the error.
 */
export function assertError(
  res: LightMyRequestResponse,
  status: number,
  code: string,
  path?: string,
): ErrorBody['error'] {
  assert.equal(res.statusCode, status, res.body);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const body = res.json<ErrorBody>();
  assert.deepEqual(Object.keys(body), ['error']);
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'details', 'message']);
  assert.equal(body.error.code, code);
  assert.equal(typeof body.error.message, 'string');
  assert.ok(body.error.message.length > 0);
  if (path !== undefined) {
    const issues = body.error.details as { path: string; message: string; code?: string }[];
    assert.ok(Array.isArray(issues), `details is a list of issues: ${res.body}`);
    const issue = issues.find((i) => i.path === path);
    assert.ok(issue, `an issue at ${path}: ${res.body}`);
    assert.equal(typeof issue.message, 'string');
  }
  return body.error;
}

/**
 * Settles every due delivery of a destination as a delivery worker would: one attempt each,
 * answered `statusCode`, `delivered` on a 2xx and `dead` otherwise.
 */
export async function settle(store: SqliteStore, destinationId: string, statusCode: number): Promise<number> {
  const now = Date.now();
  const claim = await store.claimDue(destinationId, 1_000, now);
  const ok = statusCode >= 200 && statusCode < 300;
  await store.completeAttempts(
    claim.deliveries.map((d) => ({
      attempt: {
        id: newId('att'),
        deliveryId: d.id,
        destinationId,
        attempt: d.attempts + 1,
        startedAt: now,
        finishedAt: now + 3,
        statusCode,
        errorCode: null,
        errorMessage: ok ? null : `HTTP ${statusCode}`,
        responseExcerpt: ok ? 'ok' : 'no',
      },
      status: ok ? 'delivered' : 'dead',
      nextAttemptAt: null,
      disableDestination: false,
    })),
    now + 3,
  );
  return claim.deliveries.length;
}
