/**
 * Every destination against its limit: state, limit, concurrency, backlog (pending, queued,
 * in flight, oldest pending age) and the last hour's outcomes, from one call
 * (`GET /v1/destinations/stats`), refreshed every 2 s. Filter by text, tenant and state;
 * sort by any column. Paused, disabled, backing-up, degraded and suspended destinations
 * carry a mark (the last two: endpoint health, the circuit breaker), and so does one with a
 * backlog alert firing (`GET /v1/alerts`, read with the table).
 */

import { useEffect, useMemo, useState } from 'preact/hooks';
import { type Alert, api, type DestinationOverview, type Role, type Tenant } from '../api.ts';
import {
  drainSeconds,
  formatAge,
  formatQuota,
  formatRate,
  isBackingUp,
  perSecond,
  tenantLabel,
} from '../format.ts';
import { usePoll } from '../use-poll.ts';
import { HealthBadge } from './health.tsx';
import { NewDestination } from './new-destination.tsx';
import { ShortId } from './short-id.tsx';

type SortKey =
  | 'name'
  | 'state'
  | 'limit'
  | 'concurrency'
  | 'pending'
  | 'queued'
  | 'inFlight'
  | 'oldest'
  | 'delivered'
  | 'dead';

type StateFilter = 'all' | 'attention' | 'active' | 'paused' | 'disabled' | 'backing-up';

const columns: { key: SortKey; label: string; numeric?: boolean }[] = [
  { key: 'name', label: 'Destination' },
  { key: 'state', label: 'State' },
  { key: 'limit', label: 'Limit', numeric: true },
  { key: 'concurrency', label: 'Concurrency', numeric: true },
  { key: 'pending', label: 'Pending', numeric: true },
  { key: 'queued', label: 'Queued', numeric: true },
  { key: 'inFlight', label: 'In flight', numeric: true },
  { key: 'oldest', label: 'Oldest pending', numeric: true },
  { key: 'delivered', label: 'Delivered (1 h)', numeric: true },
  { key: 'dead', label: 'Dead (1 h)', numeric: true },
];

const sortValue = (d: DestinationOverview, key: SortKey): string | number => {
  switch (key) {
    case 'name':
      return (d.name ?? d.url).toLowerCase();
    case 'state':
      return d.state;
    case 'limit':
      return perSecond(d.rateLimit);
    case 'concurrency':
      return d.maxConcurrency ?? Number.POSITIVE_INFINITY;
    case 'oldest':
      return d.stats.oldestPendingAgeMs;
    default:
      return d.stats[key];
  }
};

const ALERT_TEXT: Record<Alert['kind'], (a: Alert) => string> = {
  pending_count: (a) => `${a.value.toLocaleString()} pending (threshold ${a.threshold.toLocaleString()})`,
  pending_age: (a) =>
    `oldest waited ${formatAge(a.value * 1_000)} (threshold ${formatAge(a.threshold * 1_000)})`,
};

function marks(d: DestinationOverview, alerts: readonly Alert[] = []) {
  const list: { kind: string; text: string; title: string }[] = [];
  const firing = alerts.filter((a) => a.destinationId === d.id);
  if (firing.length > 0)
    list.push({
      kind: 'alert',
      text: 'Alert',
      title: `Backlog alert since ${new Date(firing[0]?.raisedAt ?? 0).toLocaleTimeString(undefined, { hour12: false })}: ${firing.map((a) => ALERT_TEXT[a.kind](a)).join('; ')}`,
    });
  if (d.state === 'paused')
    list.push({ kind: 'paused', text: 'Paused', title: 'Delivers nothing until resumed' });
  if (d.state === 'disabled')
    list.push({ kind: 'disabled', text: 'Disabled', title: d.disabledReason ?? 'Disabled by a 410 answer' });
  if (d.health.state !== 'healthy')
    list.push({ kind: d.health.state, text: d.health.state, title: 'Endpoint health: the circuit breaker' });
  if (isBackingUp(d.stats, d.rateLimit)) {
    const drain = formatAge(drainSeconds(d.stats, d.rateLimit) * 1_000);
    list.push({
      kind: 'backing-up',
      text: 'Backing up',
      title: `Backlog drains in about ${drain} at the limit`,
    });
  }
  return list;
}

export function Destinations({ role }: { role: Role }) {
  const [tenants, setTenants] = useState<Tenant[]>([]);
  const [tenantId, setTenantId] = useState('');
  const [text, setText] = useState('');
  const [state, setState] = useState<StateFilter>('all');
  const [sort, setSort] = useState<{ key: SortKey; descending: boolean }>({
    key: 'pending',
    descending: true,
  });

  useEffect(() => {
    if (role === 'admin') void api.tenants().then((page) => setTenants(page.data));
  }, [role]);

  const { data, error, updatedAt } = usePoll(
    async () => {
      const [page, alerts] = await Promise.all([
        api.overview(tenantId || undefined),
        // Alerts are a mark only: a token that may not read them still sees the table.
        api.alerts(tenantId || undefined).catch(() => ({ data: [] as Alert[] })),
      ]);
      return { ...page, alerts: alerts.data };
    },
    2_000,
    [tenantId],
  );

  const rows = useMemo(() => {
    const needle = text.trim().toLowerCase();
    const kept = (data?.data ?? []).filter((d) => {
      if (needle && ![d.name ?? '', d.url, d.id].some((v) => v.toLowerCase().includes(needle))) return false;
      const flagged = marks(d, data?.alerts).map((m) => m.kind);
      if (state === 'attention') return flagged.length > 0;
      if (state === 'backing-up') return flagged.includes('backing-up');
      return state === 'all' || d.state === state;
    });
    const sign = sort.descending ? -1 : 1;
    return kept.sort((a, b) => {
      const x = sortValue(a, sort.key);
      const y = sortValue(b, sort.key);
      return x < y ? -sign : x > y ? sign : 0;
    });
  }, [data, text, state, sort]);

  const tenantName = (id: string) => tenants.find((t) => t.id === id)?.name ?? id;
  const selected = tenants.find((t) => t.id === tenantId);

  return (
    <section aria-labelledby="destinations-title">
      <div class="title-row">
        <h1 id="destinations-title">Destinations</h1>
        <NewDestination role={role} tenants={tenants} />
        <p class="muted" aria-live="polite">
          {data ? `${rows.length} of ${data.data.length} shown` : 'Loading…'}
          {updatedAt && ` · updated ${updatedAt.toLocaleTimeString(undefined, { hour12: false })}`}
        </p>
      </div>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Search
          <input
            type="search"
            placeholder="name, URL or id"
            value={text}
            onInput={(e) => setText(e.currentTarget.value)}
          />
        </label>
        <label>
          Show
          <select value={state} onChange={(e) => setState(e.currentTarget.value as StateFilter)}>
            <option value="all">All destinations</option>
            <option value="attention">Needing attention</option>
            <option value="active">Active</option>
            <option value="paused">Paused</option>
            <option value="disabled">Disabled</option>
            <option value="backing-up">Backing up</option>
          </select>
        </label>
        {role === 'admin' && (
          <label>
            Tenant
            <select value={tenantId} onChange={(e) => setTenantId(e.currentTarget.value)}>
              <option value="">All tenants</option>
              {tenants.map((t) => (
                <option key={t.id} value={t.id} title={t.id}>
                  {tenantLabel(t)}
                </option>
              ))}
            </select>
          </label>
        )}
      </form>
      {selected && (
        <p class="muted" data-testid="tenant-quota">
          Ingest quota of {selected.name}: {formatQuota(selected.quota)}
        </p>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div class="table-wrap">
        <table class="grid">
          <thead>
            <tr>
              {columns.map((c) => {
                const active = sort.key === c.key;
                return (
                  <th
                    key={c.key}
                    class={c.numeric ? 'num' : undefined}
                    aria-sort={active ? (sort.descending ? 'descending' : 'ascending') : undefined}
                  >
                    <button
                      type="button"
                      class="sort"
                      onClick={() =>
                        setSort({ key: c.key, descending: active ? !sort.descending : c.numeric === true })
                      }
                    >
                      {c.label}
                      <span aria-hidden="true">{active ? (sort.descending ? ' ▾' : ' ▴') : ''}</span>
                    </button>
                  </th>
                );
              })}
            </tr>
          </thead>
          <tbody>
            {rows.map((d) => {
              const flagged = marks(d, data?.alerts);
              return (
                <tr key={d.id} class={flagged.length > 0 ? 'flagged' : undefined}>
                  <td>
                    <a href={`#/destinations/${d.id}`}>{d.name ?? d.id}</a>
                    <div class="sub" title={d.url}>
                      {d.url}
                    </div>
                    {role === 'admin' && (
                      <div class="sub" data-testid="tenant-of">
                        {tenantName(d.tenantId)} <ShortId id={d.tenantId} />
                      </div>
                    )}
                  </td>
                  <td>
                    <span class={`state state-${d.state}`}>{d.state}</span>
                    <HealthBadge state={d.health.state} />
                    {flagged
                      .filter((m) => m.kind === 'backing-up' || m.kind === 'alert')
                      .map((m) => (
                        <span key={m.kind} class={`mark mark-${m.kind}`} title={m.title}>
                          {m.text}
                        </span>
                      ))}
                  </td>
                  <td class="num">{formatRate(d.rateLimit)}</td>
                  <td class="num">{d.maxConcurrency ?? '—'}</td>
                  <td class="num">{d.stats.pending.toLocaleString()}</td>
                  <td class="num">{d.stats.queued.toLocaleString()}</td>
                  <td class="num">{d.stats.inFlight.toLocaleString()}</td>
                  <td class="num">{formatAge(d.stats.oldestPendingAgeMs)}</td>
                  <td class="num">{d.stats.delivered.toLocaleString()}</td>
                  <td class={`num${d.stats.dead > 0 ? ' bad' : ''}`}>{d.stats.dead.toLocaleString()}</td>
                </tr>
              );
            })}
            {data && rows.length === 0 && (
              <tr>
                <td colSpan={columns.length} class="empty">
                  No destination matches.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
    </section>
  );
}
