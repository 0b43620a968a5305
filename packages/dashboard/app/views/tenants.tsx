/**
 * The operator's tenants (admin token only):
 *
 *   #/tenants        every tenant (name, id, created, ingest quota) and a form to create one,
 *                    whose API key is shown once
 *   #/tenants/<id>   one tenant: rename, its keys, its deletion (tenant.tsx)
 */

import { useEffect, useRef, useState } from 'preact/hooks';
import { formatQuota, formatTime } from '../format.ts';
import { isSystemTenant, type Tenant, type TenantWithKey, tenantsApi } from '../tenants-api.ts';
import { usePoll } from '../use-poll.ts';
import { ShownKey } from './shown-key.tsx';
import { TenantDetail, takeDeletedNotice } from './tenant.tsx';

function NewTenant({ onCreated }: { onCreated(): void }) {
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<TenantWithKey | null>(null);
  // Back from the key ("Done"): the focus returns to the name, for the next tenant.
  const nameInput = useRef<HTMLInputElement>(null);
  const refocus = useRef(false);
  useEffect(() => {
    if (created === null && refocus.current) nameInput.current?.focus();
    refocus.current = false;
  }, [created]);

  if (created) {
    return (
      <div class="panel tenant-created" role="status">
        <h2>
          Created <a href={`#/tenants/${created.id}`}>{created.name}</a>
        </h2>
        <p class="muted">
          <code>{created.id}</code>. Give its API key to the tenant: it signs in to this dashboard and calls
          the API with it.
        </p>
        <ShownKey
          id="new-tenant-key"
          label={`API key of ${created.name}`}
          apiKey={created.apiKey}
          onDone={() => {
            refocus.current = true;
            setCreated(null);
            setName('');
          }}
        />
      </div>
    );
  }

  return (
    <form
      class="panel tenant-form"
      aria-labelledby="new-tenant-title"
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setError(null);
        try {
          setCreated(await tenantsApi.create(name.trim()));
          onCreated();
        } catch (err) {
          setError(err instanceof Error ? err.message : String(err));
        } finally {
          setBusy(false);
        }
      }}
    >
      <h2 id="new-tenant-title">New tenant</h2>
      <div class="filters">
        <label>
          Name
          <input
            ref={nameInput}
            name="name"
            required
            maxLength={200}
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={busy || name.trim() === ''}>
          Create tenant
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

function TenantList() {
  const [pages, setPages] = useState<Tenant[][]>([]);
  const [more, setMore] = useState<string | null>(null);
  const [notice] = useState(takeDeletedNotice);
  // The first page, kept fresh; "Show more" appends the next ones once.
  const { data, error, refresh } = usePoll(() => tenantsApi.list(), 10_000, []);
  const rows = [...(data?.data ?? []), ...pages.flat()];
  const next = pages.length === 0 ? (data?.nextCursor ?? null) : more;

  return (
    <section aria-labelledby="tenants-title">
      <h1 id="tenants-title">Tenants</h1>
      <p class="muted">
        Your platform's customers: each has its own destinations, events and API keys. A tenant signs in to
        this dashboard with one of its keys and sees only its own.
      </p>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <NewTenant onCreated={refresh} />
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div class="table-wrap">
        <table class="grid tenants-table">
          <caption class="visually-hidden">Tenants, oldest first</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Id</th>
              <th scope="col">Created</th>
              <th scope="col">Ingest quota</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((t) => (
              <tr key={t.id} data-tenant={t.id}>
                <td data-label="Name">
                  <a href={`#/tenants/${t.id}`}>{t.name}</a>
                  {isSystemTenant(t) && <span class="mark mark-system">system</span>}
                </td>
                <td data-label="Id">
                  <code>{t.id}</code>
                </td>
                <td data-label="Created">{isSystemTenant(t) ? '—' : formatTime(t.createdAt)}</td>
                <td data-label="Ingest quota">{formatQuota(t.quota)}</td>
              </tr>
            ))}
            {data && rows.length === 0 && (
              <tr>
                <td colSpan={4} class="empty">
                  No tenant yet: create one above.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      {next && (
        <p>
          <button
            type="button"
            class="secondary"
            onClick={async () => {
              const page = await tenantsApi.list(next);
              setPages((p) => [...p, page.data]);
              setMore(page.nextCursor);
            }}
          >
            Show more
          </button>
        </p>
      )}
    </section>
  );
}

export function TenantsRoute({ path }: { path: string }) {
  const detail = /^\/tenants\/(ten_[0-9a-z]+)$/.exec(path);
  if (detail?.[1]) return <TenantDetail key={detail[1]} id={detail[1]} />;
  return <TenantList />;
}
