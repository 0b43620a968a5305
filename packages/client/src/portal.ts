/**
 * The tenant side's portal (docs/api.md "Who am I", "Portal links"): who a token is, and the
 * portal links a tenant hands its customers — each a short-lived token of the v1 API for that
 * tenant only, `read` or `manage`, optionally narrowed to some destinations and branded.
 */

import type { CallOptions, Query, RequestSpec } from './http.ts';
import { pick, seg } from './http.ts';
import type { ListParams, Page } from './types.ts';

export type PortalAccess = 'read' | 'manage';

/** How the portal looks: shown by the viewer's browser; Sluice never fetches the logo. */
export interface Branding {
  title?: string | undefined;
  /** `#rrggbb`. */
  accentColor?: string | undefined;
  /** https:, data:image/…, or http: on a loopback address. */
  logoUrl?: string | undefined;
}

/** `GET /v1/whoami`: the token's role, its tenant (null for the admin token) and, for a portal token, its link. */
export interface Whoami {
  role: 'admin' | 'tenant' | 'portal';
  tenant: { id: string; name: string } | null;
  portal: {
    id: string;
    access: PortalAccess;
    destinationIds: string[] | null;
    branding: Branding | null;
    expiresAt: string;
  } | null;
}

export interface CreatePortalLinkInput {
  /** The admin token names the tenant here (or with the client's `tenantId`). */
  tenantId?: string | undefined;
  /** Default `manage`. */
  access?: PortalAccess | undefined;
  /** 10 to 86,400; default 900. */
  expiresInSeconds?: number | undefined;
  /** Only these destinations of the tenant; absent: all of them. */
  destinationIds?: string[] | undefined;
  branding?: Branding | undefined;
}

/** A link's token and URL are in this answer only. */
export interface CreatedPortalLink {
  id: string;
  /** Opens the portal signed in with the token. */
  url: string;
  /** A v1 bearer token with the link's rights. */
  token: string;
  expiresAt: string;
}

/** A link as listed: never its token. */
export interface PortalLink {
  id: string;
  tenantId: string;
  access: PortalAccess;
  destinationIds: string[] | null;
  branding: Branding | null;
  createdAt: string;
  expiresAt: string;
  expired: boolean;
}

/** What the portal-link resource needs from the client. */
interface Caller {
  call<T>(method: string, path: string, spec?: RequestSpec): Promise<T>;
  tenantId(options: { tenantId?: string } | undefined): string | undefined;
}

/** `/v1/portal-links`: a tenant's key (or the admin token for a tenant) makes, lists and revokes links. */
export class PortalLinks {
  readonly #t: Caller;
  constructor(transport: Caller) {
    this.#t = transport;
  }

  /** A new link; its token and URL are in this answer only. */
  create(
    input: CreatePortalLinkInput = {},
    options?: CallOptions & { tenantId?: string },
  ): Promise<CreatedPortalLink> {
    const tenantId = input.tenantId ?? this.#t.tenantId(options);
    const body = tenantId === undefined ? input : { ...input, tenantId };
    return this.#t.call('POST', '/v1/portal-links', { ...pick(options), body });
  }

  list(params: ListParams = {}, options?: CallOptions & { tenantId?: string }): Promise<Page<PortalLink>> {
    const query: Query = { limit: params.limit, cursor: params.cursor, tenantId: this.#t.tenantId(options) };
    return this.#t.call('GET', '/v1/portal-links', { ...pick(options), query });
  }

  async *pages(
    params: ListParams = {},
    options?: CallOptions & { tenantId?: string },
  ): AsyncGenerator<Page<PortalLink>, void, undefined> {
    let cursor = params.cursor;
    for (;;) {
      const page = await this.list({ ...params, cursor }, options);
      yield page;
      if (page.nextCursor === null || page.data.length === 0) return;
      cursor = page.nextCursor;
    }
  }

  async *listAll(
    params?: ListParams,
    options?: CallOptions & { tenantId?: string },
  ): AsyncGenerator<PortalLink, void, undefined> {
    for await (const page of this.pages(params, options)) yield* page.data;
  }

  /** Revokes the link: its token is refused from the next request on, in every API process. */
  async revoke(id: string, options?: CallOptions): Promise<void> {
    await this.#t.call('DELETE', `/v1/portal-links/${seg(id)}`, pick(options));
  }
}
