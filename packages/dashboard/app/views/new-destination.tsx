/**
 * A new destination: name, URL, rate limit (with an optional burst), concurrency, order and
 * adaptive pacing (the rest takes the API's defaults). With the admin token the tenant must be
 * chosen. The signing secret is shown once,
 * then the page opens the destination.
 */

import { useState } from 'preact/hooks';
import {
  api,
  type DestinationWithSecret,
  type Ordering,
  type Period,
  type Role,
  type Tenant,
} from '../api.ts';

export function NewDestination({ role, tenants }: { role: Role; tenants: Tenant[] }) {
  const [open, setOpen] = useState(false);
  const [tenantId, setTenantId] = useState('');
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [limit, setLimit] = useState('10');
  const [period, setPeriod] = useState<Period>('second');
  const [concurrency, setConcurrency] = useState('');
  const [burst, setBurst] = useState('');
  const [adaptive, setAdaptive] = useState(false);
  const [ordering, setOrdering] = useState<Ordering>('none');
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<DestinationWithSecret | null>(null);

  const submit = async (e: SubmitEvent) => {
    e.preventDefault();
    setError(null);
    try {
      const destination = await api.create(
        {
          ...(name.trim() ? { name: name.trim() } : {}),
          url: url.trim(),
          rateLimit: { limit: Number(limit), period, ...(burst.trim() ? { burst: Number(burst) } : {}) },
          ...(concurrency.trim() ? { maxConcurrency: Number(concurrency) } : {}),
          ...(adaptive ? { adaptive } : {}),
          ordering,
        },
        role === 'admin' ? tenantId : undefined,
      );
      setCreated(destination);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };

  if (!open) {
    return (
      <button type="button" onClick={() => setOpen(true)}>
        New destination
      </button>
    );
  }
  if (created) {
    return (
      <div class="panel created" role="status">
        <p>
          Created <strong>{created.name ?? created.id}</strong>. Its signing secret is shown only now:
        </p>
        <label>
          Signing secret
          <input readOnly value={created.secret} size={52} onFocus={(e) => e.currentTarget.select()} />
        </label>
        <p>
          <a href={`#/destinations/${created.id}`}>Open {created.name ?? created.id}</a>
        </p>
      </div>
    );
  }
  return (
    <form class="panel new-destination" onSubmit={submit} aria-labelledby="new-destination-title">
      <h2 id="new-destination-title">New destination</h2>
      <div class="filters">
        {role === 'admin' && (
          <label>
            Tenant
            <select required value={tenantId} onChange={(e) => setTenantId(e.currentTarget.value)}>
              <option value="">Choose…</option>
              {tenants.map((t) => (
                <option key={t.id} value={t.id}>
                  {t.name}
                </option>
              ))}
            </select>
          </label>
        )}
        <label>
          Name
          <input name="name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          URL
          <input
            name="url"
            type="url"
            required
            size={40}
            placeholder="https://example.com/hook"
            value={url}
            onInput={(e) => setUrl(e.currentTarget.value)}
          />
        </label>
        <label>
          Limit
          <input
            name="limit"
            type="number"
            min={1}
            required
            value={limit}
            onInput={(e) => setLimit(e.currentTarget.value)}
          />
        </label>
        <label>
          Per
          <select name="period" value={period} onChange={(e) => setPeriod(e.currentTarget.value as Period)}>
            <option value="second">second</option>
            <option value="minute">minute</option>
            <option value="hour">hour</option>
          </select>
        </label>
        <label>
          Burst
          <input
            name="burst"
            type="number"
            min={1}
            placeholder="none"
            value={burst}
            onInput={(e) => setBurst(e.currentTarget.value)}
          />
        </label>
        <label class="inline">
          <input
            name="adaptive"
            type="checkbox"
            checked={adaptive}
            onChange={(e) => setAdaptive(e.currentTarget.checked)}
          />
          Adaptive
        </label>
        <label>
          Max concurrency
          <input
            name="maxConcurrency"
            type="number"
            min={1}
            placeholder="no cap"
            value={concurrency}
            onInput={(e) => setConcurrency(e.currentTarget.value)}
          />
        </label>
        <label>
          Order
          <select
            name="ordering"
            value={ordering}
            onChange={(e) => setOrdering(e.currentTarget.value as Ordering)}
          >
            <option value="none">none</option>
            <option value="fifo">FIFO</option>
          </select>
        </label>
        <button type="submit">Create</button>
        <button type="button" class="secondary" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}
