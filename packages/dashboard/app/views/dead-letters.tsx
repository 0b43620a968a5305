/**
 * Dead letters: deliveries whose attempts ran out, filtered by destination and by when they
 * died (`since`); replay one (`POST /v1/deliveries/:id/retry`) or every one matching
 * (`POST /v1/destinations/:id/replay` with the same `since`, for the chosen destination or
 * for each one listed). Replayed deliveries go through the rate limiter like any other.
 */

import { useContext, useEffect, useState } from 'preact/hooks';
import { CanWrite } from '../access.ts';
import { api, type Role, type Tenant } from '../api.ts';
import { tenantLabel } from '../format.ts';
import { usePoll } from '../use-poll.ts';
import { ConfirmButton } from './confirm-button.tsx';
import { DeliveryTable } from './deliveries.tsx';

const SINCE_CHOICES = [
  { value: '', label: 'any time' },
  { value: '3600', label: 'the last hour' },
  { value: '21600', label: 'the last 6 hours' },
  { value: '86400', label: 'the last 24 hours' },
  { value: '604800', label: 'the last 7 days' },
];

export function DeadLetters({ role }: { role: Role }) {
  const canWrite = useContext(CanWrite);
  const [destinationId, setDestinationId] = useState('');
  const [sinceSeconds, setSinceSeconds] = useState('');
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const [tenants, setTenants] = useState<Tenant[]>([]);
  useEffect(() => {
    if (role === 'admin') void api.tenants().then((page) => setTenants(page.data));
  }, [role]);
  const tenantOf = (id: string) => {
    const tenant = tenants.find((t) => t.id === id);
    return tenant ? tenantLabel(tenant) : id;
  };

  const destinations = usePoll(() => api.overview(), 10_000, []);
  const since = () =>
    sinceSeconds === '' ? undefined : new Date(Date.now() - Number(sinceSeconds) * 1_000).toISOString();
  const dead = usePoll(
    () =>
      api.deliveries({
        status: 'dead',
        destinationId: destinationId || undefined,
        since: since(),
        limit: 100,
      }),
    3_000,
    [destinationId, sinceSeconds],
  );
  const list = destinations.data?.data ?? [];

  const replayAll = async () => {
    const targets = destinationId ? [destinationId] : list.map((d) => d.id);
    setBusy(true);
    try {
      const at = since();
      let count = 0;
      for (const id of targets) count += (await api.replay(id, at)).count;
      setNotice(`${count} dead ${count === 1 ? 'delivery' : 'deliveries'} replayed.`);
      dead.refresh();
    } catch (err) {
      setNotice(`Failed: ${err instanceof Error ? err.message : err}`);
    } finally {
      setBusy(false);
    }
  };

  const rows = dead.data?.data ?? [];
  return (
    <section aria-labelledby="dead-title">
      <div class="title-row">
        <h1 id="dead-title">Dead letters</h1>
        <p class="muted">Deliveries whose attempts ran out. Replayed ones go through the rate limiter.</p>
      </div>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Destination
          <select value={destinationId} onChange={(e) => setDestinationId(e.currentTarget.value)}>
            <option value="">All destinations</option>
            {list.map((d) => (
              <option key={d.id} value={d.id}>
                {d.name ?? d.id}
                {role === 'admin' ? ` — ${tenantOf(d.tenantId)}` : ''}
              </option>
            ))}
          </select>
        </label>
        <label>
          Died in
          <select value={sinceSeconds} onChange={(e) => setSinceSeconds(e.currentTarget.value)}>
            {SINCE_CHOICES.map((c) => (
              <option key={c.value} value={c.value}>
                {c.label}
              </option>
            ))}
          </select>
        </label>
        {canWrite && (
          <ConfirmButton
            label="Replay all matching"
            question={`Replay every dead delivery of ${destinationId ? 'this destination' : `${list.length} destinations`}${sinceSeconds ? ' that died in the chosen time' : ''}?`}
            yes="Replay them"
            disabled={busy || rows.length === 0}
            onConfirm={() => void replayAll()}
          />
        )}
      </form>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {dead.error && (
        <p class="error" role="alert">
          {dead.error}
        </p>
      )}
      <p class="muted">{dead.data ? `${rows.length}${dead.data.nextCursor ? '+' : ''} dead` : 'Loading…'}</p>
      <DeliveryTable
        deliveries={rows}
        showDestination
        caption="Dead deliveries"
        onChanged={(message) => {
          setNotice(message);
          dead.refresh();
        }}
      />
    </section>
  );
}
