/**
 * The customer portal: the same bundle served at `/portal/`, opened from a portal link
 * (`/portal/#token=…`). The token is taken from the URL's fragment (which never reaches a
 * server), kept in this tab's sessionStorage (`sluice.portal.token`; the page's memory where
 * storage is refused) and the fragment replaced with `#/`. `GET /v1/whoami` gives the link's
 * access (`read` or `manage`), its destinations and its branding (title, accent colour, logo).
 *
 * It shows the tenant's side only — destinations (add, edit, limits, pause/resume, secret,
 * test event, event types including Sluice's operational `sluice.*` ones), deliveries with
 * their attempts and replay, the event log — with no sign-out and nothing of the operator's.
 * A `read` link hides every write control (the API refuses them too). Any `401` (the link
 * expired or was revoked) replaces the whole page with one that says so.
 */

import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { CanCreate, CanWrite } from '../access.ts';
import {
  ApiError,
  forgetToken,
  type Identity,
  onUnauthorized,
  type PortalGrant,
  type Role,
  savedToken,
  saveToken,
  whoAmI,
} from '../api.ts';
import { OutageBanner, useHash } from '../shell.tsx';
import { DeadLetters } from './dead-letters.tsx';
import { DestinationDetail } from './destination.tsx';
import { Destinations } from './destinations.tsx';
import { EventLog } from './event-log.tsx';
import { EventLookup } from './events.tsx';

/** The portal sees what a tenant's key sees, narrowed by the API to the link's rights. */
const TENANT: Role = 'tenant';

type Branding = NonNullable<PortalGrant['branding']>;
const BRANDING_KEY = 'sluice.portal.branding';

/** The token of the link just opened (then the fragment becomes `#/`), or the one kept. */
function takeToken(): string | null {
  const match = /(?:^#|[#&?/])token=([^&]+)/.exec(location.hash);
  if (match?.[1]) {
    // The address first: saving may keep the token in this history entry's state.
    history.replaceState(null, '', `${location.pathname}${location.search}#/`);
    saveToken(decodeURIComponent(match[1]));
  }
  return savedToken();
}

/**
 * The branding last seen, so that the expired page can name the platform after a 401: in the
 * page's memory, and in sessionStorage for a reload (where the browser allows it).
 */
let seenBranding: Branding | null = null;
function keptBranding(): Branding | null {
  if (seenBranding) return seenBranding;
  try {
    return JSON.parse(sessionStorage.getItem(BRANDING_KEY) ?? 'null') as Branding | null;
  } catch {
    return null;
  }
}

function keepBranding(branding: Branding | null): void {
  seenBranding = branding;
  try {
    sessionStorage.setItem(BRANDING_KEY, JSON.stringify(branding));
  } catch {
    // storage refused: the expired page says "the platform"
  }
}

/** The accent colour as the CSS variable every control uses, and the tab's title. */
function applyBranding(branding: Branding | null, tenantName: string | undefined): void {
  const accent = branding?.accentColor;
  if (accent && CSS.supports('color', accent)) document.documentElement.style.setProperty('--accent', accent);
  document.title = branding?.title ?? (tenantName ? `Webhooks — ${tenantName}` : 'Webhooks');
}

type State =
  | { kind: 'checking' }
  | { kind: 'ready'; who: Identity }
  | { kind: 'expired' }
  | { kind: 'no-link' }
  | { kind: 'broken'; message: string };

function FullPage({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <main class="full-page" id="content">
      <div class="full-page-box" role="alert">
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}

function PortalRoute({ path }: { path: string }) {
  const detail = /^\/destinations\/(dst_[0-9a-z]+)$/.exec(path);
  if (detail?.[1]) return <DestinationDetail id={detail[1]} />;
  if (path === '/dead') return <DeadLetters role={TENANT} />;
  if (path === '/log') return <EventLog role={TENANT} />;
  const event = /^\/events(?:\/(evt_[0-9a-z]+))?$/.exec(path);
  if (event) return <EventLookup id={event[1]} />;
  return <Destinations role={TENANT} />;
}

function PortalShell({ who }: { who: Identity }) {
  const path = useHash();
  const branding = who.portal?.branding ?? null;
  const access = who.portal?.access ?? 'manage';
  const title = branding?.title ?? 'Webhooks';
  const nav = [
    { href: '#/', label: 'Destinations', active: path === '/' || path.startsWith('/destinations') },
    { href: '#/log', label: 'Event log', active: path.startsWith('/log') || path.startsWith('/events') },
    { href: '#/dead', label: 'Failed deliveries', active: path.startsWith('/dead') },
  ];
  return (
    <CanWrite.Provider value={access === 'manage'}>
      <CanCreate.Provider value={(who.portal?.destinationIds ?? null) === null}>
        <button type="button" class="skip" onClick={() => document.getElementById('content')?.focus()}>
          Skip to content
        </button>
        <header class="top portal-top">
          <a class="brand" href="#/">
            {branding?.logoUrl && <img class="logo" src={branding.logoUrl} alt="" height={28} />}
            <span>{title}</span>
          </a>
          <nav aria-label="Portal">
            {nav.map((item) => (
              <a key={item.href} href={item.href} aria-current={item.active ? 'page' : undefined}>
                {item.label}
              </a>
            ))}
          </nav>
          <span class="who" data-testid="who">
            {who.tenant?.name ?? ''}
            {access === 'read' && <span class="read-only">Read only</span>}
          </span>
        </header>
        <OutageBanner />
        <main id="content" tabIndex={-1}>
          <PortalRoute path={path} />
        </main>
      </CanCreate.Provider>
    </CanWrite.Provider>
  );
}

export function PortalApp() {
  const [token] = useState(takeToken);
  const [state, setState] = useState<State>(token ? { kind: 'checking' } : { kind: 'no-link' });

  useEffect(
    () =>
      onUnauthorized(() => {
        forgetToken();
        setState({ kind: 'expired' });
      }),
    [],
  );
  useEffect(() => {
    if (!token) return;
    let retry: ReturnType<typeof setTimeout> | undefined;
    const check = () =>
      whoAmI(token).then(
        (who) => {
          // Only a link's token: an admin token or a tenant's key would give a page others
          // may frame more than any link does, so it is forgotten at once.
          if (who.role !== 'portal') {
            forgetToken();
            setState({
              kind: 'broken',
              message: 'The portal opens with a portal link only, never with an API key or the admin token.',
            });
            return;
          }
          keepBranding(who.portal?.branding ?? null);
          applyBranding(who.portal?.branding ?? null, who.tenant?.name);
          setState({ kind: 'ready', who });
        },
        (err: unknown) => {
          if (err instanceof ApiError && err.code === 'unavailable') {
            retry = setTimeout(check, 5_000);
          } else if (err instanceof ApiError && err.status === 401) {
            forgetToken();
            setState({ kind: 'expired' });
          } else {
            setState({ kind: 'broken', message: err instanceof Error ? err.message : String(err) });
          }
        },
      );
    void check();
    return () => clearTimeout(retry);
  }, [token]);

  switch (state.kind) {
    case 'checking':
      return (
        <>
          <OutageBanner />
          <p class="loading">Opening…</p>
        </>
      );
    case 'expired': {
      const who = keptBranding()?.title ?? 'the platform';
      return (
        <FullPage title="This link has expired or was revoked">
          <p data-testid="expired">Ask {who} for a new one.</p>
        </FullPage>
      );
    }
    case 'no-link':
      return (
        <FullPage title="Open this page from your link">
          <p>This page shows your webhook settings when opened from the link you were given.</p>
        </FullPage>
      );
    case 'broken':
      return (
        <FullPage title="This page cannot open">
          <p>{state.message}</p>
        </FullPage>
      );
    case 'ready':
      return <PortalShell who={state.who} />;
  }
}
