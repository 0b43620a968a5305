/**
 * The operator dashboard: sign in with the admin token (every tenant) or a tenant's API key
 * (its own destinations), then four views routed by the URL's hash, so every view has an
 * address to share and the browser's back button works:
 *
 *   #/                    destinations, against their limits
 *   #/destinations/<id>   one destination: live chart, limit form, actions, recent deliveries
 *   #/dead                dead letters: filter, replay one or all
 *   #/events/<id>         event lookup
 */

import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, forgetToken, type Role, savedToken, watchOutage, whoAmI } from './api.ts';
import { DeadLetters } from './views/dead-letters.tsx';
import { DestinationDetail } from './views/destination.tsx';
import { Destinations } from './views/destinations.tsx';
import { EventLookup } from './views/events.tsx';
import { SignIn } from './views/sign-in.tsx';
import { TenantsRoute } from './views/tenants.tsx';

function useHash(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const onChange = () => setHash(location.hash);
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return hash.replace(/^#/, '') || '/';
}

/**
 * Shown while the API answers `503 unavailable`: its store (or Redis) is down, so what the
 * page shows may be out of date; the views keep polling and it goes on the next other answer.
 */
function OutageBanner() {
  const [retryAfter, setRetryAfter] = useState<number | null>(null);
  useEffect(() => watchOutage(setRetryAfter), []);
  if (retryAfter === null) return null;
  return (
    <div class="outage" role="alert">
      Sluice cannot reach its store right now (503 unavailable): what is shown may be out of date. Nothing
      accepted is lost; retrying every {retryAfter} s.
    </div>
  );
}

function Route({ path, role }: { path: string; role: Role }) {
  const detail = /^\/destinations\/(dst_[0-9a-z]+)$/.exec(path);
  if (detail?.[1]) return <DestinationDetail id={detail[1]} />;
  if (path === '/dead' || path.startsWith('/dead?')) return <DeadLetters role={role} />;
  const event = /^\/events(?:\/(evt_[0-9a-z]+))?$/.exec(path);
  if (event) return <EventLookup id={event[1]} />;
  if (role === 'admin' && /^\/tenants(\/|$)/.test(path)) return <TenantsRoute path={path} />;
  return <Destinations role={role} />;
}

function App() {
  const [role, setRole] = useState<Role | null | 'checking'>(savedToken() ? 'checking' : null);
  const path = useHash();

  useEffect(() => {
    const token = savedToken();
    if (role !== 'checking' || !token) return;
    let retry: ReturnType<typeof setTimeout> | undefined;
    const check = () =>
      whoAmI(token)
        .then(setRole)
        .catch((err: unknown) => {
          // An outage says nothing about the token: keep it and ask again.
          if (err instanceof ApiError && err.code === 'unavailable') {
            retry = setTimeout(check, 5_000);
            return;
          }
          forgetToken();
          setRole(null);
        });
    void check();
    return () => clearTimeout(retry);
  }, [role]);

  if (role === 'checking')
    return (
      <>
        <OutageBanner />
        <p class="loading">Checking your token…</p>
      </>
    );
  if (role === null)
    return (
      <>
        <OutageBanner />
        <SignIn onSignedIn={setRole} />
      </>
    );

  const nav = [
    { href: '#/', label: 'Destinations', active: path === '/' || path.startsWith('/destinations') },
    { href: '#/dead', label: 'Dead letters', active: path.startsWith('/dead') },
    { href: '#/events', label: 'Event lookup', active: path.startsWith('/events') },
    ...(role === 'admin'
      ? [{ href: '#/tenants', label: 'Tenants', active: path.startsWith('/tenants') }]
      : []),
  ];
  return (
    <>
      <button type="button" class="skip" onClick={() => document.getElementById('content')?.focus()}>
        Skip to content
      </button>
      <header class="top">
        <a class="brand" href="#/">
          Sluice
        </a>
        <nav aria-label="Main">
          {nav.map((item) => (
            <a key={item.href} href={item.href} aria-current={item.active ? 'page' : undefined}>
              {item.label}
            </a>
          ))}
        </nav>
        <span class="who">{role === 'admin' ? 'Operator (all tenants)' : 'Tenant key'}</span>
        <button
          type="button"
          class="quiet"
          onClick={() => {
            forgetToken();
            setRole(null);
          }}
        >
          Sign out
        </button>
      </header>
      <OutageBanner />
      <main id="content" tabIndex={-1}>
        <Route path={path} role={role} />
      </main>
    </>
  );
}

const root = document.getElementById('app');
if (root) render(<App />, root);
