/**
 * A new destination: name, URL, rate limit (with an optional burst), concurrency, order,
 * adaptive pacing and the event types it gets, from the catalog (the rest takes the API's
 * defaults). Hidden without write access (a `read` portal link). With the admin token the tenant must be
 * chosen. The signing secret is shown once,
 * then the page opens the destination.
 */

import { useContext, useState } from 'preact/hooks';
import { CanCreate, CanWrite } from '../access.ts';
import { api, type DestinationWithSecret, type Role, type Tenant } from '../api.ts';
import { tenantLabel } from '../format.ts';
import { EventTypesPicker } from './event-types-picker.tsx';
import { PacingFields, type PacingValues, pacingSettings, pacingValues } from './pacing-fields.tsx';

export function NewDestination({ role, tenants }: { role: Role; tenants: Tenant[] }) {
  const canWrite = useContext(CanWrite);
  const mayCreate = useContext(CanCreate);
  const canCreate = canWrite && mayCreate;
  const [open, setOpen] = useState(false);
  const [tenantId, setTenantId] = useState('');
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [pacing, setPacing] = useState<PacingValues>(() => pacingValues());
  const [eventTypes, setEventTypes] = useState<string[]>(['*']);
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
          eventTypes: eventTypes.length === 0 ? ['*'] : eventTypes,
          ...pacingSettings(pacing),
        },
        role === 'admin' ? tenantId : undefined,
      );
      setCreated(destination);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };

  if (!canCreate) return null;
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
                <option key={t.id} value={t.id} title={t.id}>
                  {tenantLabel(t)}
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
        <PacingFields value={pacing} onChange={setPacing} />
        <EventTypesPicker value={eventTypes} onChange={setEventTypes} idPrefix="new" />
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
