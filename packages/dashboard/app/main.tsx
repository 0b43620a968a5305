/**
 * The operator dashboard: sign in with the admin token (every tenant) or a tenant's API key
 * (its own destinations), then four views routed by the URL's hash, so every view has an
 * address to share and the browser's back button works:
 *
 *   #/                    destinations, against their limits
 *   #/destinations/<id>   one destination: live chart, limit form, actions, recent deliveries
 *   #/dead                dead letters: filter, replay one or all
 *   #/log                 the event log: a tenant's events by type, destination and time
 *   #/events/<id>         event lookup
 */

import 'uplot/dist/uPlot.min.css';
import './styles.css';
import './views.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, forgetToken, type Identity, isPortal, type Role, savedToken, whoAmI } from './api.ts';
import { OutageBanner, useHash } from './shell.tsx';
import { DeadLetters } from './views/dead-letters.tsx';
import { DestinationDetail } from './views/destination.tsx';
import { Destinations } from './views/destinations.tsx';
import { EventLog } from './views/event-log.tsx';
import { EventLookup } from './views/events.tsx';
import { PortalApp } from './views/portal.tsx';
import { SignIn } from './views/sign-in.tsx';
import { TenantsRoute } from './views/tenants.tsx';

function Route({ path, role }: { path: string; role: Role }) {
  const detail = /^\/destinations\/(dst_[0-9a-z]+)$/.exec(path);
  if (detail?.[1]) return <DestinationDetail id={detail[1]} />;
  if (path === '/dead' || path.startsWith('/dead?')) return <DeadLetters role={role} />;
  if (path === '/log' || path.startsWith('/log?')) return <EventLog role={role} />;
  const event = /^\/events(?:\/(evt_[0-9a-z]+))?$/.exec(path);
  if (event) return <EventLookup id={event[1]} />;
  if (role === 'admin' && /^\/tenants(\/|$)/.test(path)) return <TenantsRoute path={path} />;
  return <Destinations role={role} />;
}

function App() {
  const [who, setWho] = useState<Identity | null | 'checking'>(savedToken() ? 'checking' : null);
  const path = useHash();

  useEffect(() => {
    const token = savedToken();
    if (who !== 'checking' || !token) return;
    let retry: ReturnType<typeof setTimeout> | undefined;
    const check = () =>
      whoAmI(token)
        .then(setWho)
        .catch((err: unknown) => {
          // An outage says nothing about the token: keep it and ask again.
          if (err instanceof ApiError && err.code === 'unavailable') {
            retry = setTimeout(check, 5_000);
            return;
          }
          forgetToken();
          setWho(null);
        });
    void check();
    return () => clearTimeout(retry);
  }, [who]);

  if (who === 'checking')
    return (
      <>
        <OutageBanner />
        <p class="loading">Checking your token…</p>
      </>
    );
  if (who === null)
    return (
      <>
        <OutageBanner />
        <SignIn onSignedIn={setWho} />
      </>
    );
  // A portal link's token signed in here sees what a tenant key sees (the API narrows it).
  const role: Role = who.role === 'portal' ? 'tenant' : who.role;

  const nav = [
    { href: '#/', label: 'Destinations', active: path === '/' || path.startsWith('/destinations') },
    { href: '#/dead', label: 'Dead letters', active: path.startsWith('/dead') },
    { href: '#/log', label: 'Event log', active: path.startsWith('/log') },
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
        <span class="who" data-testid="who">
          {role === 'admin'
            ? 'Operator (all tenants)'
            : who.tenant
              ? `Tenant: ${who.tenant.name}`
              : 'Tenant key'}
        </span>
        <button
          type="button"
          class="quiet"
          onClick={() => {
            forgetToken();
            setWho(null);
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
// Under /portal/ the same bundle is a tenant's customer portal (views/portal.tsx).
if (root) render(isPortal() ? <PortalApp /> : <App />, root);
