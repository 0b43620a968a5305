import type { Dispatcher, Transforms } from '@sluice/engine';
import type { Store } from '@sluice/store';
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
import type { EventCatalog } from './event-catalog.ts';
import type { QuotaOptions, Quotas } from './quota.ts';
import { ApiError, errorResponses } from './responses.ts';

export type { Dispatcher, RuntimeStats } from '@sluice/engine';

export interface ApiConfig {
  allowPrivateNetworks: boolean;
  /** Most bytes of one event's serialized payload. */
  maxPayloadBytes: number;
  /** Most levels one event's payload nests (objects and arrays). */
  maxPayloadDepth: number;
  /** Most bytes of one request body. */
  maxRequestBytes: number;
  /** Events of a type not in the catalog refused (`SLUICE_EVENT_TYPES_STRICT`); default false. */
  eventTypesStrict?: boolean;
  /** `SLUICE_PUBLIC_URL`: where users reach the API (portal links' `url`); unset: as each request saw it. */
  publicUrl?: string | undefined;
  /** `SLUICE_PORTAL_FRAME_ANCESTORS`: the portal's CSP `frame-ancestors` sources; default `'self'`. */
  portalFrameAncestors?: string | undefined;
  /** `SLUICE_METRICS_TOKEN`: `/metrics` only with `authorization: Bearer <it>`; unset: open. */
  metricsToken?: string | undefined;
}

/** What `buildApi` is built from (the routes that need more than the context read it too). */
export interface ApiOptions {
  store: Store;
  dispatcher: Dispatcher;
  adminToken: string;
  config: ApiConfig;
  logger: Logger;
  registry: Registry;
  /** Tenant ingest quotas: the operator-wide defaults and where the rate's buckets live (quota.ts). */
  quotas?: QuotaOptions;
  /** Whether every dependency is reachable (for /readyz). */
  ready?: () => Promise<void>;
  /**
   * The transform sandbox the check on write and the preview run in (the single box shares
   * its engine's); default: one of the API's own, with the default limits, closed with it.
   */
  transforms?: Transforms;
  clock?: () => number;
  version?: string;
}

export interface ApiContext {
  store: Store;
  dispatcher: Dispatcher;
  auth: Authenticator;
  config: ApiConfig;
  clock: () => number;
  quotas: Quotas;
  /** The event-type catalog's compiled schemas (event-catalog.ts). */
  catalog: EventCatalog;
  transforms: Transforms;
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
