/**
 * The tenant side's portal (docs/api.md "Who am I", "Portal links"): who a token is, and the
 * portal links a tenant hands its customers — each a short-lived token of the v1 API for that
 * tenant only, `read` or `manage`, optionally narrowed to some destinations and branded.
 */

import type { CallOptions, Query, RequestSpec } from './http.ts';
import { pick, seg } from './http.ts';
import type { CreatedPortalLink, CreatePortalLinkInput, ListParams, Page, PortalLink } from './types.ts';

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
