/**
 * One tenant, for the operator: rename it; its API keys (create another, shown once; delete
 * one, refused at once; the last one stays: `409`); delete the tenant, confirmed by typing its
 * name. Sluice's own tenant (alerts) is shown, never renamed, deleted or given a key.
 */

import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api.ts';
import { formatQuota, formatTime } from '../format.ts';
import { type CreatedKey, isSystemTenant, type Tenant, tenantsApi } from '../tenants-api.ts';
import { usePoll } from '../use-poll.ts';
import { ShownKey } from './shown-key.tsx';

/** What the tenants list says once, after this page deleted a tenant (then forgotten). */
let deletedNotice: string | null = null;
export function takeDeletedNotice(): string | null {
  const message = deletedNotice;
  deletedNotice = null;
  return message;
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

function RenameForm({ tenant, onRenamed }: { tenant: Tenant; onRenamed(tenant: Tenant): void }) {
  const [name, setName] = useState(tenant.name);
  const [status, setStatus] = useState<{ ok: boolean; text: string } | null>(null);
  const changed = name.trim() !== '' && name.trim() !== tenant.name;
  return (
    <form
      class="tenant-form"
      onSubmit={async (e) => {
        e.preventDefault();
        setStatus(null);
        try {
          const renamed = await tenantsApi.rename(tenant.id, name.trim());
          onRenamed(renamed);
          setStatus({ ok: true, text: `Renamed to ${renamed.name}.` });
        } catch (err) {
          setStatus({ ok: false, text: `Not renamed: ${message(err)}` });
        }
      }}
    >
      <div class="filters">
        <label>
          Name
          <input
            name="name"
            required
            maxLength={200}
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={!changed}>
          Rename
        </button>
      </div>
      {status && (
        <p class={status.ok ? 'notice' : 'error'} role={status.ok ? 'status' : 'alert'}>
          {status.text}
        </p>
      )}
    </form>
  );
}

function Keys({ tenant }: { tenant: Tenant }) {
  const system = isSystemTenant(tenant);
  const { data, error, refresh } = usePoll(() => tenantsApi.keys(tenant.id), 15_000, [tenant.id]);
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const [status, setStatus] = useState<{ ok: boolean; text: string } | null>(null);
  // Where the focus goes when the control that had it is gone (a deleted key's row, "Done").
  const heading = useRef<HTMLHeadingElement>(null);
  const createButton = useRef<HTMLButtonElement>(null);

  const run = async (work: () => Promise<string>) => {
    setStatus(null);
    try {
      setStatus({ ok: true, text: await work() });
    } catch (err) {
      const last = err instanceof ApiError && err.status === 409;
      setStatus({
        ok: false,
        text: last ? 'A tenant keeps at least one key: create another first.' : message(err),
      });
    }
    refresh();
  };

  return (
    <section class="panel" aria-labelledby="keys-title">
      <h2 id="keys-title" ref={heading} tabIndex={-1}>
        API keys
      </h2>
      {!system && (
        <p class="muted">
          To rotate a key: create another, switch the tenant's clients to it, then delete the old one.
        </p>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div class="table-wrap">
        <table class="grid tenants-table">
          <caption class="visually-hidden">
            API keys of {tenant.name}, oldest first; last use to within a minute
          </caption>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Starts with</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              {!system && (
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {data?.data.map((key) => (
              <tr key={key.id} data-key={key.id}>
                <td data-label="Key">
                  <code>{key.id}</code>
                </td>
                <td data-label="Starts with">{key.prefix ? <code>{key.prefix}…</code> : '—'}</td>
                <td data-label="Created">{formatTime(key.createdAt)}</td>
                <td data-label="Last used" title="To within a minute">
                  {key.lastUsedAt ? formatTime(key.lastUsedAt) : 'never'}
                </td>
                {!system && (
                  <td>
                    <button
                      type="button"
                      class="small danger"
                      aria-label={`Delete key ${key.id}`}
                      onClick={() => {
                        const what = key.prefix ? `${key.id} (${key.prefix}…)` : key.id;
                        if (!confirm(`Delete key ${what}? Whoever uses it is refused (401) at once.`)) return;
                        void run(async () => {
                          await tenantsApi.deleteKey(tenant.id, key.id);
                          if (created?.id === key.id) setCreated(null);
                          heading.current?.focus();
                          return `Key ${key.id} deleted: it is refused (401) from now on.`;
                        });
                      }}
                    >
                      Delete
                    </button>
                  </td>
                )}
              </tr>
            ))}
            {data && data.data.length === 0 && (
              <tr>
                <td colSpan={system ? 4 : 5} class="empty">
                  {system ? 'None: nothing signs in as this tenant.' : 'No key.'}
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      {!system && (
        <p>
          <button
            ref={createButton}
            type="button"
            onClick={() =>
              run(async () => {
                const key = await tenantsApi.createKey(tenant.id);
                setCreated(key);
                return `Key ${key.id} created.`;
              })
            }
          >
            Create another key
          </button>
        </p>
      )}
      {status && (
        <p class={status.ok ? 'notice' : 'error'} role={status.ok ? 'status' : 'alert'}>
          {status.text}
        </p>
      )}
      {created && (
        <ShownKey
          id="created-key"
          label={`New API key ${created.id}`}
          apiKey={created.apiKey}
          onDone={() => {
            setCreated(null);
            createButton.current?.focus();
          }}
        />
      )}
    </section>
  );
}

function DeleteTenant({ tenant }: { tenant: Tenant }) {
  const [typed, setTyped] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return (
    <form
      class="panel tenant-danger"
      aria-labelledby="delete-tenant-title"
      onSubmit={async (e) => {
        e.preventDefault();
        if (typed !== tenant.name) return;
        setBusy(true);
        setError(null);
        try {
          await tenantsApi.remove(tenant.id);
          deletedNotice = `Tenant ${tenant.name} deleted.`;
          location.hash = '#/tenants';
        } catch (err) {
          setError(`Not deleted: ${message(err)}`);
          setBusy(false);
        }
      }}
    >
      <h2 id="delete-tenant-title">Delete this tenant</h2>
      <p id="delete-tenant-what">
        Its destinations are deleted and their undelivered deliveries cancelled; its API keys and portal links
        stop working at once. Its events stay until retention removes them. This cannot be undone.
      </p>
      <div class="filters">
        <label>
          Type the tenant's name, {tenant.name}, to confirm
          <input
            name="confirm-name"
            autocomplete="off"
            spellcheck={false}
            aria-describedby="delete-tenant-what"
            value={typed}
            onInput={(e) => setTyped(e.currentTarget.value)}
          />
        </label>
        <button type="submit" class="danger" disabled={busy || typed !== tenant.name}>
          Delete tenant
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

export function TenantDetail({ id }: { id: string }) {
  const [tenant, setTenant] = useState<Tenant | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    tenantsApi.get(id).then(setTenant, (err: unknown) => setError(`${message(err)}: ${id}`));
  }, [id]);

  const crumbs = (
    <p class="crumbs">
      <a href="#/tenants">Tenants</a> ›
    </p>
  );
  if (!tenant)
    return (
      <section>
        {crumbs}
        <p class={error ? 'error' : 'loading'} role={error ? 'alert' : undefined}>
          {error ?? 'Loading…'}
        </p>
      </section>
    );
  const system = isSystemTenant(tenant);
  return (
    <section aria-labelledby="tenant-title">
      {crumbs}
      <div class="title-row">
        <h1 id="tenant-title">{tenant.name}</h1>
        {system && <span class="mark mark-system">system</span>}
      </div>
      <p class="muted">
        <code>{tenant.id}</code>
        {!system && ` · created ${formatTime(tenant.createdAt)}`} · ingest quota {formatQuota(tenant.quota)}
      </p>
      {system ? (
        <p class="panel tenant-system" data-testid="system-tenant">
          This is Sluice's own tenant: it delivers the backlog alerts to the operator's alert URL
          (SLUICE_ALERT_URL). Sluice needs it as it is, so it cannot be renamed or deleted here, and no key is
          made for it.
        </p>
      ) : (
        <div class="panel">
          <h2>Rename</h2>
          <RenameForm tenant={tenant} onRenamed={setTenant} />
        </div>
      )}
      <Keys tenant={tenant} />
      {!system && <DeleteTenant tenant={tenant} />}
    </section>
  );
}
