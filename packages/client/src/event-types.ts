/**
 * `/v1/event-types`: the event-type catalog (docs/api.md "Event-type catalog"). Any token
 * reads it, Sluice's own `sluice.…` types included; the admin token creates, changes and
 * deletes the operator's types. Listed by name, ascending.
 */

import type { CallOptions, Query, RequestSpec } from './http.ts';
import { pick, seg } from './http.ts';
import type { CreateEventTypeInput, EventType, ListParams, Page, UpdateEventTypeInput } from './types.ts';

/** What the event-type resource needs from the client. */
interface Caller {
  call<T>(method: string, path: string, spec?: RequestSpec): Promise<T>;
}

export class EventTypes {
  readonly #t: Caller;
  constructor(transport: Caller) {
    this.#t = transport;
  }

  /** Adds a type to the catalog (admin token). */
  create(input: CreateEventTypeInput, options?: CallOptions): Promise<EventType> {
    return this.#t.call('POST', '/v1/event-types', { ...pick(options), body: input });
  }

  list(params: ListParams = {}, options?: CallOptions): Promise<Page<EventType>> {
    const query: Query = { limit: params.limit, cursor: params.cursor };
    return this.#t.call('GET', '/v1/event-types', { ...pick(options), query });
  }

  async *pages(
    params: ListParams = {},
    options?: CallOptions,
  ): AsyncGenerator<Page<EventType>, void, undefined> {
    let cursor = params.cursor;
    for (;;) {
      const page = await this.list({ ...params, cursor }, options);
      yield page;
      if (page.nextCursor === null || page.data.length === 0) return;
      cursor = page.nextCursor;
    }
  }

  async *listAll(params?: ListParams, options?: CallOptions): AsyncGenerator<EventType, void, undefined> {
    for await (const page of this.pages(params, options)) yield* page.data;
  }

  get(name: string, options?: CallOptions): Promise<EventType> {
    return this.#t.call('GET', `/v1/event-types/${seg(name)}`, pick(options));
  }

  /** Changes a type (admin token); the result must hold together (the example satisfies the schema). */
  update(name: string, patch: UpdateEventTypeInput, options?: CallOptions): Promise<EventType> {
    return this.#t.call('PATCH', `/v1/event-types/${seg(name)}`, { ...pick(options), body: patch });
  }

  /** Removes a type from the catalog (admin token); a built-in one cannot be (409 conflict). */
  async delete(name: string, options?: CallOptions): Promise<void> {
    await this.#t.call('DELETE', `/v1/event-types/${seg(name)}`, pick(options));
  }
}
