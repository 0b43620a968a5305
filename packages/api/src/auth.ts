/**
 * Bearer authentication. The operator's admin token acts on everything; a tenant's API key
 * acts on that tenant's resources only. Keys are high-entropy random strings stored as
 * SHA-256 hashes (a fast hash is right for 256-bit random secrets: nothing to brute-force),
 * looked up by hash; the admin token is compared in constant time.
 */

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Store, Tenant } from '@sluice/engine';
import type { FastifyRequest } from 'fastify';
import { ApiError } from './errors.ts';

export type Principal = { kind: 'admin' } | { kind: 'tenant'; tenant: Tenant };

export const hashKey = (key: string): string => createHash('sha256').update(key).digest('hex');

export const generateApiKey = (): string => `sk_${randomBytes(32).toString('base64url')}`;

export const generateAdminToken = (): string => `sa_${randomBytes(32).toString('base64url')}`;

export class Authenticator {
  private readonly adminDigest: Buffer;
  private readonly store: Store;

  constructor(adminToken: string, store: Store) {
    this.adminDigest = createHash('sha256').update(adminToken).digest();
    this.store = store;
  }

  async authenticate(request: FastifyRequest): Promise<Principal> {
    const header = request.headers.authorization;
    const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw new ApiError(401, 'unauthorized', 'missing bearer token');
    const token = match[1] as string;
    if (timingSafeEqual(createHash('sha256').update(token).digest(), this.adminDigest))
      return { kind: 'admin' };
    const tenant = await this.store.tenantByKeyHash(hashKey(token));
    if (tenant === undefined) throw new ApiError(401, 'unauthorized', 'invalid token');
    return { kind: 'tenant', tenant };
  }

  async admin(request: FastifyRequest): Promise<void> {
    const principal = await this.authenticate(request);
    if (principal.kind !== 'admin') throw new ApiError(403, 'forbidden', 'this route needs the admin token');
  }

  /**
   * The tenant a request acts for: the key's tenant, or for the admin token the
   * `tenantId` query parameter (when `required`).
   */
  async tenantOf(request: FastifyRequest): Promise<{ principal: Principal; tenantId: string | undefined }> {
    const principal = await this.authenticate(request);
    if (principal.kind === 'tenant') return { principal, tenantId: principal.tenant.id };
    const query = request.query as Record<string, unknown>;
    const tenantId = typeof query.tenantId === 'string' ? query.tenantId : undefined;
    if (tenantId !== undefined && (await this.store.getTenant(tenantId)) === undefined) {
      throw new ApiError(404, 'not_found', 'tenant not found', { id: tenantId });
    }
    return { principal, tenantId };
  }
}

/** True when the principal may see a resource of `tenantId` (else the route answers 404). */
export function canSee(principal: Principal, tenantId: string): boolean {
  return principal.kind === 'admin' || principal.tenant.id === tenantId;
}
