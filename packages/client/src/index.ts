/**
 * `@sluice/client`: a typed client for the Sluice HTTP API v1, over `fetch`, with no
 * dependencies. It ships as JavaScript and declarations compiled into dist/ (`npm run
 * build`, run by `prepack` and the repository's `prepare`). README.md has the guide.
 */

export { DEFAULT_TIMEOUT_MS, Sluice, type SluiceOptions } from './client.ts';
export {
  type ClientErrorCode,
  isSluiceError,
  type ServerErrorCode,
  SluiceError,
  type ValidationIssue,
} from './errors.ts';
export type { EventTypes } from './event-types.ts';
export type { CallOptions, FetchLike, FetchResponse, Query, RequestSpec } from './http.ts';
export type { PortalLinks } from './portal.ts';
export type { Alerts, Deliveries, Destinations, Events, TenantCallOptions, Tenants } from './resources.ts';
export type * from './types.ts';
