/**
 * Bearer authentication, in an `onRequest` hook: before the body is even parsed, so a
 * request without a valid token is a 401 whatever it carries. The operator's admin token
 * acts on everything; a tenant's API key on that tenant's resources only (others' ids
 * answer 404, never 403); a portal link's token (`prt_…`, docs/api.md "Portal links") as its
 * tenant's key would, within the link's rights (below). Keys and link tokens are
 * high-entropy random strings stored as SHA-256 hashes (a fast hash is right for 256-bit
 * random secrets: nothing to brute-force) and looked up by hash; the admin token is compared
 * in constant time.
 *
 * A portal token's rights: never an admin route, nor one whose `config.portal` is `never`
 * (sending events, the portal links themselves); a `read` link no write (any method but GET
 * and HEAD) nor a signing secret → 403 forbidden; a link narrowed to some destinations sees only those (others
 * answer 404, lists leave them out: `seesDestination`, `narrowedTo`), and may not use a route
 * whose `config.portal` is `whole` (creating a destination). An expired or revoked link → 401.
 */

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { PortalLink, Store, Tenant } from '@sluice/store';
import type { FastifyRequest } from 'fastify';
import { ApiError, notFound } from './errors.ts';

export type Principal =
  | { kind: 'admin' }
  | { kind: 'tenant'; tenant: Tenant }
  | { kind: 'portal'; tenant: Tenant; link: PortalLink };

/** Who may call a route: set as the route's `config.auth`. */
type Access = 'public' | 'admin' | 'tenant';

/**
 * What a portal token may do on a `tenant` route beyond the default (reads; writes with a
 * `manage` link): `never`, nothing; `manage`, only with a `manage` link (a read that reveals
 * a signing secret); `whole`, only with a link not narrowed to some destinations.
 */
type PortalRule = 'never' | 'manage' | 'whole';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
  interface FastifyContextConfig {
    auth?: Access;
    portal?: PortalRule;
  }
}

export const hashKey = (key: string): string => createHash('sha256').update(key).digest('hex');

export const generateApiKey = (): string => `sk_${randomBytes(32).toString('base64url')}`;

/** The part of a key shown in listings: `sk_` and 8 of its 43 random characters. */
export const keyPrefix = (apiKey: string): string => apiKey.slice(0, 11);

export const generateAdminToken = (): string => `sa_${randomBytes(32).toString('base64url')}`;

/** A portal link's token: its id (`prt_…`), a dot, and 256 random bits. */
export const generatePortalToken = (linkId: string): string =>
  `${linkId}.${randomBytes(32).toString('base64url')}`;

const PORTAL_TOKEN = /^prt_[0-9a-z]{26}\.[A-Za-z0-9_-]{43}$/;

const READS = new Set(['GET', 'HEAD']);

/**
 * A key's `lastUsedAt` is written at most once a minute, after the request's read showed it
 * older, and never awaited: a request costs no write. `touching` keeps one process from
 * writing it again while its write is on the way (replicas may each write it once: harmless).
 */
const TOUCH_EVERY_MS = 60_000;

/**
 * Every request reads its key's row (one probe of the unique index on the key's hash, joined
 * with its tenant): nothing keeps a tenant found by key, so a deleted key, or a deleted
 * tenant's, is refused at its next request in every API replica of either shape, with no
 * message between processes to lose. The cost is that indexed read; the Postgres store reads
 * the keys of one turn's requests in one statement, so it is one round trip a turn, not a
 * request.
 */
export class Authenticator {
  private readonly adminDigest: Buffer;
  private readonly store: Store;
  private readonly clock: () => number;
  private readonly touching = new Set<string>();

  constructor(adminToken: string, store: Store, clock: () => number = Date.now) {
    this.adminDigest = createHash('sha256').update(adminToken).digest();
    this.store = store;
    this.clock = clock;
  }

  private async tenantByKey(token: string): Promise<Tenant | undefined> {
    const match = await this.store.keyByHash(hashKey(token));
    if (match === undefined) return undefined;
    const now = this.clock();
    if (
      (match.lastUsedAt === null || now - match.lastUsedAt >= TOUCH_EVERY_MS) &&
      !this.touching.has(match.keyId)
    ) {
      this.touching.add(match.keyId);
      void this.store
        .touchTenantKey(match.keyId, now)
        .catch(() => undefined)
        .finally(() => this.touching.delete(match.keyId));
    }
    return match.tenant;
  }

  /** The `onRequest` hook: sets `request.principal` or throws 401/403. */
  hook = async (request: FastifyRequest): Promise<void> => {
    const access = request.routeOptions.config.auth ?? 'public';
    if (access === 'public') return;
    const header = request.headers.authorization;
    const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw new ApiError(401, 'unauthorized', 'missing bearer token');
    const token = match[1] as string;
    if (timingSafeEqual(createHash('sha256').update(token).digest(), this.adminDigest)) {
      request.principal = { kind: 'admin' };
      return;
    }
    if (token.startsWith('prt_')) {
      request.principal = await this.portal(request, token, access);
      return;
    }
    const tenant = await this.tenantByKey(token);
    if (tenant === undefined) throw new ApiError(401, 'unauthorized', 'invalid token');
    if (access === 'admin') throw new ApiError(403, 'forbidden', 'this route needs the admin token');
    request.principal = { kind: 'tenant', tenant };
  };

  /** A portal link's token: its row read on every request, so a revoked link is refused at once. */
  private async portal(request: FastifyRequest, token: string, access: Access): Promise<Principal> {
    const match = PORTAL_TOKEN.test(token) ? await this.store.portalLinkByHash(hashKey(token)) : undefined;
    if (match === undefined) throw new ApiError(401, 'unauthorized', 'invalid token');
    const { link, tenant } = match;
    if (this.clock() >= link.expiresAt)
      throw new ApiError(401, 'unauthorized', 'this portal link has expired', {
        expiresAt: iso(link.expiresAt),
      });
    const refuse = (message: string) => new ApiError(403, 'forbidden', message);
    const rule = request.routeOptions.config.portal;
    if (access === 'admin') throw refuse('this route needs the admin token');
    if (rule === 'never') throw refuse('a portal link cannot use this route');
    if ((!READS.has(request.method) || rule === 'manage') && link.access === 'read')
      throw refuse('this portal link may read only');
    if (rule === 'whole' && link.destinationIds !== null)
      throw refuse('a portal link narrowed to some destinations cannot use this route');
    return { kind: 'portal', tenant, link };
  }

  /** Whether the request may see the destination (false: 404): a narrowed portal link's only. */
  seesDestination(request: FastifyRequest, destinationId: string): boolean {
    const narrowed = narrowedTo(request);
    return narrowed === undefined || narrowed.includes(destinationId);
  }

  /**
   * The tenant a request acts for: the key's own, or for the admin token the `tenantId`
   * query parameter (undefined when absent: all tenants).
   */
  async scope(request: FastifyRequest, tenantId: string | undefined): Promise<string | undefined> {
    const principal = request.principal;
    if (principal.kind !== 'admin') {
      if (tenantId !== undefined && tenantId !== principal.tenant.id) throw notFound('tenant', tenantId);
      return principal.tenant.id;
    }
    if (tenantId !== undefined && (await this.store.getTenant(tenantId)) === undefined) {
      throw notFound('tenant', tenantId);
    }
    return tenantId;
  }

  /**
   * Whether the request may act on a resource of `tenantId`: its own with a tenant key; any
   * with the admin token, narrowed to one tenant by `?tenantId=`. False means 404.
   */
  async canAccess(request: FastifyRequest, tenantId: string): Promise<boolean> {
    const scope = await this.scope(request, (request.query as { tenantId?: string } | undefined)?.tenantId);
    return canSee(request.principal, tenantId) && (scope === undefined || scope === tenantId);
  }

  /** Like `scope`, for routes that create: the admin token must name the tenant. */
  async tenantFor(request: FastifyRequest, tenantId: string | undefined): Promise<string> {
    const scoped = await this.scope(request, tenantId);
    if (scoped === undefined) {
      throw new ApiError(400, 'validation_failed', 'the admin token must name the tenant: ?tenantId=', [
        { path: 'query.tenantId', message: 'required with the admin token' },
      ]);
    }
    return scoped;
  }
}

/** True when the principal may see a resource of `tenantId` (else the route answers 404). */
function canSee(principal: Principal, tenantId: string): boolean {
  return principal.kind === 'admin' || principal.tenant.id === tenantId;
}

/** The destinations a portal link is narrowed to, or undefined when the request sees all of its tenant's. */
export function narrowedTo(request: FastifyRequest): readonly string[] | undefined {
  const principal = request.principal;
  return principal.kind === 'portal' ? (principal.link.destinationIds ?? undefined) : undefined;
}

const iso = (ms: number): string => new Date(ms).toISOString();
