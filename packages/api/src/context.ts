import type { Destination, Store } from '@sluice/store';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Authenticator } from './auth.ts';
import { ApiError, errorResponses } from './responses.ts';

/** A destination's live pace, as the delivery side sees it. */
export interface RuntimeStats {
  queued: number;
  inFlight: number;
  /** The limit the rate limiter plans with (adaptive pacing may hold it below the configured one). */
  effectiveLimit: number;
  backingOff: boolean;
}

/** What the API needs from the delivery side, told after each commit. */
export interface Dispatcher {
  /** New work was committed for this destination. */
  wake(destinationId: string): void;
  /**
   * A destination was created: every process caches it now, so its first events read
   * nothing (a first event whose tick, request and ingest each read the destination paid
   * those reads when every destination of a platform starts at once). Never fails: a
   * process that missed it reads the destination on first use.
   */
  destinationCreated(destinationId: string): Promise<void>;
  /** The destination changed (limit, state, …) or was deleted. */
  destinationChanged(destinationId: string): Promise<void>;
  runtimeStats(destinationId: string): Promise<RuntimeStats>;
  /**
   * The live destination as the delivery side sees it (its cache, refreshed on every change):
   * ingest checks the destinations an event names without a read of the store each time.
   */
  destination(destinationId: string): Promise<Destination | undefined>;
}

export interface ApiConfig {
  allowPrivateNetworks: boolean;
  /** Most bytes of one event's serialized payload. */
  maxPayloadBytes: number;
  /** Most levels one event's payload nests (objects and arrays). */
  maxPayloadDepth: number;
  /** Most bytes of one request body. */
  maxRequestBytes: number;
}

/** What `buildApi` is built from (the routes that need more than the context read it too). */
export interface ApiOptions {
  store: Store;
  dispatcher: Dispatcher;
  adminToken: string;
  config: ApiConfig;
  logger: Logger;
  registry: Registry;
  /** Whether every dependency is reachable (for /readyz). */
  ready?: () => Promise<void>;
  clock?: () => number;
  version?: string;
}

export interface ApiContext {
  store: Store;
  dispatcher: Dispatcher;
  auth: Authenticator;
  config: ApiConfig;
  clock: () => number;
}

export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  ZodTypeProvider
>;

export { ApiError, errorResponses };

/** Opaque list cursors: the last id of the page, base64url. */
export const encodeCursor = (id: string | null): string | null =>
  id === null ? null : Buffer.from(id).toString('base64url');

export function decodeCursor(cursor: string | undefined, prefix: string): string | undefined {
  if (cursor === undefined) return undefined;
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!new RegExp(`^${prefix}_[0-9a-z]{26}$`).test(id)) {
    throw new ApiError(400, 'validation_failed', 'query.cursor: not a cursor of this list', [
      { path: 'query.cursor', message: 'not a cursor of this list' },
    ]);
  }
  return id;
}
