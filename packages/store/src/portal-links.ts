/**
 * Portal links (docs/api.md "Portal links"): the records and the statements both stores run
 * on them (migration 0012), written once with the store's parameter marks (`Mark`).
 *
 * A link's token is stored as its SHA-256 hash only, as a tenant's key is (the API's auth.ts
 * says why that is enough), and every request that presents one reads its row by that hash:
 * a revoked link (its row deleted) or a deleted tenant's is refused at its next request in
 * every API process. Expiry is the API's to enforce (the row says when); an expired link is
 * listed until it is pruned, a day after it expired, when its tenant makes another.
 */

import type { Tenant } from './destination.ts';
import type { Mark } from './destination-sql.ts';
import { type PageRequest, pageStatement } from './page.ts';
import { type Row, TENANT_COLUMNS, tenantFromRow } from './rows.ts';

export type PortalAccess = 'read' | 'manage';

/** How the portal looks (the viewer's browser loads the logo; Sluice never fetches it). */
export interface PortalBranding {
  title?: string | undefined;
  accentColor?: string | undefined;
  logoUrl?: string | undefined;
}

export interface PortalLink {
  id: string;
  tenantId: string;
  access: PortalAccess;
  /** Only these destinations; null: all the tenant's. */
  destinationIds: string[] | null;
  branding: PortalBranding | null;
  createdAt: number;
  expiresAt: number;
}

/** A link to create: the record and its token's hash. */
export interface NewPortalLink extends PortalLink {
  tokenHash: string;
}

/** The link a request presented and its tenant (not deleted). */
export interface PortalLinkMatch {
  link: PortalLink;
  tenant: Tenant;
}

/** How long after it expired a link is still listed (then pruned when its tenant makes another). */
export const EXPIRED_LINKS_KEPT_MS = 24 * 3_600_000;

const COLUMNS = 'id, tenant_id, access, destination_ids, branding, created_at, expires_at';

export function portalLinkFromRow(r: Row, prefix = ''): PortalLink {
  const ids = r[`${prefix}destination_ids`];
  const branding = r[`${prefix}branding`];
  return {
    id: String(r[`${prefix}id`]),
    tenantId: String(r[`${prefix}tenant_id`]),
    access: r[`${prefix}access`] === 'read' ? 'read' : 'manage',
    destinationIds: ids === null || ids === undefined ? null : (JSON.parse(String(ids)) as string[]),
    branding:
      branding === null || branding === undefined ? null : (JSON.parse(String(branding)) as PortalBranding),
    createdAt: Number(r[`${prefix}created_at`]),
    expiresAt: Number(r[`${prefix}expires_at`]),
  };
}

export function portalLinkMatchFromRow(r: Row): PortalLinkMatch {
  return { link: portalLinkFromRow(r, 'link_'), tenant: tenantFromRow(r) };
}

/** The values of `portalLinkSql(…).insert`, in order. */
export function portalLinkValues(link: NewPortalLink): (string | number | null)[] {
  return [
    link.id,
    link.tenantId,
    link.tokenHash,
    link.access,
    link.destinationIds === null ? null : JSON.stringify(link.destinationIds),
    link.branding === null ? null : JSON.stringify(link.branding),
    link.createdAt,
    link.expiresAt,
  ];
}

/** The statements of portal links: each takes the values named in its comment. */
export function portalLinkSql(mark: Mark) {
  const m = (n: number) => mark(n);
  const tenantColumns = TENANT_COLUMNS.split(', ')
    .map((c) => `t.${c}`)
    .join(', ');
  const linkColumns = COLUMNS.split(', ')
    .map((c) => `l.${c} AS link_${c}`)
    .join(', ');
  return {
    /** `portalLinkValues`; inserts nothing (no row back) when the tenant is missing or deleted. */
    insert: `INSERT INTO portal_links (id, tenant_id, token_hash, access, destination_ids, branding, created_at, expires_at)
      SELECT ${m(1)}, id, ${m(3)}, ${m(4)}, ${m(5)}, ${m(6)}, ${m(7)}, ${m(8)} FROM tenants
      WHERE id = ${m(2)} AND deleted_at IS NULL RETURNING id`,
    /** tenant id, expired before (now - EXPIRED_LINKS_KEPT_MS) */
    prune: `DELETE FROM portal_links WHERE tenant_id = ${m(1)} AND expires_at < ${m(2)}`,
    /** token hash: one probe of the unique index, with the tenant (not deleted) */
    byHash: `SELECT ${tenantColumns}, ${linkColumns} FROM portal_links l JOIN tenants t ON t.id = l.tenant_id
      WHERE l.token_hash = ${m(1)} AND t.deleted_at IS NULL`,
    /** id */
    get: `SELECT ${COLUMNS} FROM portal_links WHERE id = ${m(1)}`,
    /** id */
    delete: `DELETE FROM portal_links WHERE id = ${m(1)} RETURNING id`,
    /** tenant id */
    deleteOfTenant: `DELETE FROM portal_links WHERE tenant_id = ${m(1)}`,
  };
}

/** A page of links, newest first, of one tenant or of all (`pageStatement`; read with `pageOf`). */
export function portalLinksStatement(
  mark: Mark,
  tenantId: string | undefined,
  req: PageRequest,
): { text: string; values: (string | number)[] } {
  return pageStatement(
    mark,
    'portal_links',
    COLUMNS,
    [],
    tenantId === undefined ? [] : [['tenant_id', tenantId]],
    req,
  );
}
