/**
 * The Postgres store's portal links (`@sluice/store`'s portal-links.ts has the statements). A
 * request with a link's token reads its row alone (one probe of the unique hash index): unlike
 * API keys (tenants.ts `keyLookups`), a portal's few requests gain nothing from sharing a turn's
 * round trip.
 */

import {
  EXPIRED_LINKS_KEPT_MS,
  type NewPortalLink,
  type Page,
  type PageRequest,
  type PortalLink,
  type PortalLinkMatch,
  pageOf,
  portalLinkFromRow,
  portalLinkMatchFromRow,
  portalLinkSql,
  portalLinksStatement,
  portalLinkValues,
} from '@sluice/store';
import type { Db, Queryable } from './db.ts';
import { mark } from './rows.ts';

export const PORTAL_LINK_SQL = portalLinkSql(mark);
const SQL = PORTAL_LINK_SQL;

export async function createPortalLink(db: Db, link: NewPortalLink): Promise<PortalLink | undefined> {
  return db.tx(async (q) => {
    // Made only for a tenant not deleted; one made while the tenant's deletion commits is
    // harmless: portalLinkByHash reads links of tenants not deleted only.
    const rows = await q.query(SQL.insert, portalLinkValues(link));
    if (rows.length === 0) return undefined;
    await q.query(SQL.prune, [link.tenantId, link.createdAt - EXPIRED_LINKS_KEPT_MS]);
    const { tokenHash: _hash, ...record } = link;
    return record;
  });
}

export async function portalLinkByHash(db: Queryable, hash: string): Promise<PortalLinkMatch | undefined> {
  const [r] = await db.query(SQL.byHash, [hash]);
  return r && portalLinkMatchFromRow(r);
}

export async function getPortalLink(db: Queryable, id: string): Promise<PortalLink | undefined> {
  const [r] = await db.query(SQL.get, [id]);
  return r && portalLinkFromRow(r);
}

export async function listPortalLinks(
  db: Queryable,
  tenantId: string | undefined,
  req: PageRequest,
): Promise<Page<PortalLink>> {
  const { text, values } = portalLinksStatement(mark, tenantId, req);
  return pageOf(await db.query(text, values), req.limit, (r) => portalLinkFromRow(r));
}

export async function deletePortalLink(db: Queryable, id: string): Promise<boolean> {
  return (await db.query(SQL.delete, [id])).length > 0;
}
