/**
 * The event log (`GET /v1/events`): a tenant's events, newest first, filtered by type (a type
 * or `prefix.*`), by destination (the events with a delivery to it) and by when they were
 * accepted (since / until), 25 a page with older and newer. The admin token chooses the tenant
 * (the API needs one). A page carries each event's payload size, not the payload: an event
 * opens in the event lookup, which reads it with its payload and deliveries.
 */

import { useEffect, useState } from 'preact/hooks';
import { api, type DestinationOverview, type Role, type Tenant } from '../api.ts';
import { formatBytes, formatTime, tenantLabel } from '../format.ts';
import { usePoll } from '../use-poll.ts';
import { useCatalog } from './event-types-picker.tsx';

interface Filters {
  tenantId: string;
  type: string;
  destinationId: string;
  /** `datetime-local` values, in the browser's time zone; empty: no bound. */
  since: string;
  until: string;
}

const EMPTY: Filters = { tenantId: '', type: '', destinationId: '', since: '', until: '' };
const PAGE = 25;
const iso = (local: string) => (local === '' ? undefined : new Date(local).toISOString());

export function EventLog({ role }: { role: Role }) {
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [applied, setApplied] = useState<Filters>(EMPTY);
  /** The cursors of the pages before this one; the last is this page's (undefined: the first). */
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [tenants, setTenants] = useState<Tenant[]>([]);
  const [destinations, setDestinations] = useState<DestinationOverview[]>([]);
  const { types } = useCatalog();

  useEffect(() => {
    if (role === 'admin')
      void api.tenants().then((page) => {
        setTenants(page.data);
        const first = page.data[0]?.id ?? '';
        setDraft((d) => ({ ...d, tenantId: d.tenantId || first }));
        setApplied((a) => ({ ...a, tenantId: a.tenantId || first }));
      });
  }, [role]);
  useEffect(() => {
    if (role === 'admin' && !draft.tenantId) return;
    void api
      .overview(role === 'admin' ? draft.tenantId : undefined)
      .then((page) => setDestinations(page.data));
  }, [role, draft.tenantId]);

  const cursor = cursors[cursors.length - 1];
  const ready = role !== 'admin' || applied.tenantId !== '';
  const { data, error } = usePoll(
    async () =>
      ready
        ? api.events({
            ...(role === 'admin' ? { tenantId: applied.tenantId } : {}),
            type: applied.type.trim() || undefined,
            destinationId: applied.destinationId || undefined,
            since: iso(applied.since),
            until: iso(applied.until),
            limit: PAGE,
            cursor,
          })
        : null,
    5_000,
    [applied, cursor, ready],
  );

  const set = <K extends keyof Filters>(key: K, value: Filters[K]) => setDraft({ ...draft, [key]: value });
  const events = data?.data ?? [];
  const page = cursors.length;

  return (
    <section aria-labelledby="log-title">
      <div class="title-row">
        <h1 id="log-title">Event log</h1>
        <p class="muted">Events accepted, newest first. Open one to see its payload and deliveries.</p>
      </div>
      <form
        class="filters"
        aria-label="Event log filters"
        onSubmit={(e) => {
          e.preventDefault();
          setApplied(draft);
          setCursors([undefined]);
        }}
      >
        {role === 'admin' && (
          <label>
            Tenant
            <select
              name="tenantId"
              value={draft.tenantId}
              onChange={(e) => setDraft({ ...draft, tenantId: e.currentTarget.value, destinationId: '' })}
            >
              {tenants.map((t) => (
                <option key={t.id} value={t.id} title={t.id}>
                  {tenantLabel(t)}
                </option>
              ))}
            </select>
          </label>
        )}
        <label>
          Type
          <input
            name="type"
            list="log-types"
            placeholder="order.paid or order.*"
            value={draft.type}
            onInput={(e) => set('type', e.currentTarget.value)}
          />
          <datalist id="log-types">
            {types.map((t) => (
              <option key={t.name} value={t.name} />
            ))}
          </datalist>
        </label>
        <label>
          Destination
          <select
            name="destinationId"
            value={draft.destinationId}
            onChange={(e) => set('destinationId', e.currentTarget.value)}
          >
            <option value="">Any destination</option>
            {destinations.map((d) => (
              <option key={d.id} value={d.id}>
                {d.name ?? d.id}
              </option>
            ))}
          </select>
        </label>
        <label>
          Since
          <input
            name="since"
            type="datetime-local"
            step={1}
            value={draft.since}
            onInput={(e) => set('since', e.currentTarget.value)}
          />
        </label>
        <label>
          Until
          <input
            name="until"
            type="datetime-local"
            step={1}
            value={draft.until}
            onInput={(e) => set('until', e.currentTarget.value)}
          />
        </label>
        <button type="submit">Apply filters</button>
        <button
          type="button"
          class="secondary"
          onClick={() => {
            const cleared = { ...EMPTY, tenantId: draft.tenantId };
            setDraft(cleared);
            setApplied(cleared);
            setCursors([undefined]);
          }}
        >
          Clear
        </button>
      </form>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <p class="muted" aria-live="polite" data-testid="log-count">
        {data ? `Page ${page}: ${events.length} event${events.length === 1 ? '' : 's'}` : 'Loading…'}
      </p>
      <div class="table-wrap">
        <table class="grid log">
          <caption class="visually-hidden">Events</caption>
          <thead>
            <tr>
              <th>Event</th>
              <th>Type</th>
              <th>Accepted</th>
              <th class="num">Payload</th>
            </tr>
          </thead>
          <tbody>
            {events.map((e) => (
              <tr key={e.id} data-event={e.id}>
                <td>
                  <a href={`#/events/${e.id}`}>{e.id}</a>
                </td>
                <td>{e.type}</td>
                <td>{formatTime(e.createdAt)}</td>
                <td class="num">{formatBytes(e.payloadBytes)}</td>
              </tr>
            ))}
            {data && events.length === 0 && (
              <tr>
                <td colSpan={4} class="empty">
                  No event matches.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      <nav class="pager" aria-label="Event log pages">
        <button
          type="button"
          class="secondary"
          disabled={page === 1}
          onClick={() => setCursors(cursors.slice(0, -1))}
        >
          Newer
        </button>
        <button
          type="button"
          class="secondary"
          disabled={!data?.nextCursor}
          onClick={() => data?.nextCursor && setCursors([...cursors, data.nextCursor])}
        >
          Older
        </button>
      </nav>
    </section>
  );
}
