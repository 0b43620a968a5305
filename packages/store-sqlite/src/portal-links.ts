/** The SQLite store's portal links (`@sluice/store`'s portal-links.ts has the statements). */

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
import type { Sql } from './lists.ts';
import { mark } from './rows.ts';

const SQL = portalLinkSql(mark);

export function createPortalLink(db: Sql, link: NewPortalLink): PortalLink | undefined {
  return db.tx(() => {
    if (db.sql(SQL.insert).get(...portalLinkValues(link)) === undefined) return undefined;
    db.sql(SQL.prune).run(link.tenantId, link.createdAt - EXPIRED_LINKS_KEPT_MS);
    const { tokenHash: _hash, ...record } = link;
    return record;
  });
}

export function portalLinkByHash(db: Sql, hash: string): PortalLinkMatch | undefined {
  const r = db.sql(SQL.byHash).get(hash);
  return r && portalLinkMatchFromRow(r);
}

export function getPortalLink(db: Sql, id: string): PortalLink | undefined {
  const r = db.sql(SQL.get).get(id);
  return r && portalLinkFromRow(r);
}

export function listPortalLinks(db: Sql, tenantId: string | undefined, req: PageRequest): Page<PortalLink> {
  const { text, values } = portalLinksStatement(mark, tenantId, req);
  return pageOf(db.sql(text).all(...values), req.limit, (r) => portalLinkFromRow(r));
}

export function deletePortalLink(db: Sql, id: string): boolean {
  return db.sql(SQL.delete).get(id) !== undefined;
}

/** A deleted tenant's links go with it (its deletion's transaction runs this). */
export function deleteTenantLinks(db: Sql, tenantId: string): void {
  db.sql(SQL.deleteOfTenant).run(tenantId);
}
