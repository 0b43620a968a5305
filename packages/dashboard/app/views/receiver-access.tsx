/**
 * What a destination's receiver wants besides the URL (docs/api.md "Custom headers and
 * credentials", "OAuth2 client credentials", "Mutual TLS"): its headers, one credential and
 * its TLS, saved with one `PATCH`. Secrets are never shown again: a credential of the same type
 * with its secret left empty is kept as it is; a new PEM replaces the TLS, the certificates
 * shown are the ones in force. The same form serves the portal.
 */

import { useState } from 'preact/hooks';
import { api, type Destination } from '../api.ts';
import { SaveOutcome, useSave } from './save-state.tsx';

type AuthType = 'none' | 'bearer' | 'basic' | 'header' | 'oauth2_client_credentials';
type UpdateInput = Parameters<typeof api.update>[1];

interface Values {
  headers: string;
  authType: AuthType;
  /** bearer's token, basic's password, header's value, OAuth2's client secret: empty keeps it. */
  secret: string;
  username: string;
  headerName: string;
  tokenUrl: string;
  clientId: string;
  scope: string;
  audience: string;
  clientCertificate: string;
  clientKey: string;
  ca: string;
  removeTls: boolean;
}

const valuesOf = (d: Destination): Values => {
  const a = d.auth;
  return {
    headers: Object.entries(d.headers)
      .map(([name, value]) => `${name}: ${value}`)
      .join('\n'),
    authType: a?.type ?? 'none',
    secret: '',
    username: a?.type === 'basic' ? a.username : '',
    headerName: a?.type === 'header' ? a.name : '',
    tokenUrl: a?.type === 'oauth2_client_credentials' ? a.tokenUrl : '',
    clientId: a?.type === 'oauth2_client_credentials' ? a.clientId : '',
    scope: a?.type === 'oauth2_client_credentials' ? (a.scope ?? '') : '',
    audience: a?.type === 'oauth2_client_credentials' ? (a.audience ?? '') : '',
    clientCertificate: '',
    clientKey: '',
    ca: '',
    removeTls: false,
  };
};

/** `Name: value` lines as the API's headers object; a line without a colon is an error. */
function parseHeaders(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new Error(`headers, line ${i + 1}: write it as Name: value`);
    out[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return out;
}

/** The credential to send, or undefined to keep the one in force (same type, secret left empty). */
function authOf(v: Values, current: Destination['auth']): UpdateInput['auth'] | undefined {
  const shown = valuesToShown(v);
  // Flat objects: their keys sorted, so the order the API wrote them in does not matter.
  const stable = (x: object | null) => JSON.stringify(x, x === null ? undefined : Object.keys(x).sort());
  if (v.secret === '' && stable(current) === stable(shown)) return undefined;
  if (v.authType === 'none') return null;
  if (v.secret === '')
    throw new Error('credential: give its secret (it is never shown, so it must be typed again)');
  switch (v.authType) {
    case 'bearer':
      return { type: 'bearer', token: v.secret };
    case 'basic':
      return { type: 'basic', username: v.username, password: v.secret };
    case 'header':
      return { type: 'header', name: v.headerName, value: v.secret };
    case 'oauth2_client_credentials':
      return {
        type: 'oauth2_client_credentials',
        tokenUrl: v.tokenUrl,
        clientId: v.clientId,
        clientSecret: v.secret,
        ...(v.scope === '' ? {} : { scope: v.scope }),
        ...(v.audience === '' ? {} : { audience: v.audience }),
      };
  }
}

/** What the API would show of the credential the form describes (its fields that are not secret). */
function valuesToShown(v: Values): Destination['auth'] {
  switch (v.authType) {
    case 'none':
      return null;
    case 'bearer':
      return { type: 'bearer' };
    case 'basic':
      return { type: 'basic', username: v.username };
    case 'header':
      return { type: 'header', name: v.headerName };
    case 'oauth2_client_credentials':
      return {
        type: 'oauth2_client_credentials',
        tokenUrl: v.tokenUrl,
        clientId: v.clientId,
        ...(v.scope === '' ? {} : { scope: v.scope }),
        ...(v.audience === '' ? {} : { audience: v.audience }),
      };
  }
}

function tlsOf(v: Values): UpdateInput['tls'] | undefined {
  if (v.removeTls) return null;
  const given = { clientCertificate: v.clientCertificate, clientKey: v.clientKey, ca: v.ca };
  const set = Object.entries(given).filter(([, pem]) => pem.trim() !== '');
  return set.length === 0 ? undefined : Object.fromEntries(set);
}

export function ReceiverAccess({
  destination,
  onSaved,
  canWrite = true,
}: {
  destination: Destination;
  onSaved(d: Destination): void;
  canWrite?: boolean;
}) {
  const [v, setV] = useState<Values>(() => valuesOf(destination));
  const set = <K extends keyof Values>(key: K, value: Values[K]) => setV({ ...v, [key]: value });

  const { busy, error, saved, submit } = useSave(async () => {
    const auth = authOf(v, destination.auth);
    const tls = tlsOf(v);
    const updated = await api.update(destination.id, {
      headers: parseHeaders(v.headers),
      ...(auth === undefined ? {} : { auth }),
      ...(tls === undefined ? {} : { tls }),
    });
    onSaved(updated);
    setV(valuesOf(updated));
  });

  const text = (
    key: 'username' | 'headerName' | 'tokenUrl' | 'clientId' | 'scope' | 'audience',
    label: string,
  ) => (
    <label>
      {label}
      <input
        name={key}
        disabled={!canWrite}
        value={v[key]}
        required={key !== 'scope' && key !== 'audience'}
        onInput={(e) => set(key, e.currentTarget.value)}
      />
    </label>
  );
  const pem = (key: 'clientCertificate' | 'clientKey' | 'ca', label: string) => (
    <label>
      {label}
      <textarea
        name={key}
        rows={3}
        disabled={!canWrite || v.removeTls}
        placeholder="-----BEGIN …"
        value={v[key]}
        onInput={(e) => set(key, e.currentTarget.value)}
      />
    </label>
  );
  const secretLabel = {
    none: '',
    bearer: 'Token',
    basic: 'Password',
    header: 'Value',
    oauth2_client_credentials: 'Client secret',
  }[v.authType];
  const { tls } = destination;

  return (
    <form class="receiver-form" onSubmit={submit} aria-labelledby="access-title">
      <h2 id="access-title">What the receiver wants</h2>
      <div class="edit-grid">
        <div class="edit-col">
          <label>
            Headers
            <textarea
              name="headers"
              rows={3}
              disabled={!canWrite}
              placeholder="X-Partner-Account: acme-42"
              value={v.headers}
              onInput={(e) => set('headers', e.currentTarget.value)}
            />
          </label>
          <span class="hint">
            One per line, Name: value. Sent on every attempt; shown to anyone who can see it.
          </span>
          <fieldset>
            <legend>Credential</legend>
            <label for={`auth-type-${destination.id}`}>Type</label>
            <select
              id={`auth-type-${destination.id}`}
              name="authType"
              disabled={!canWrite}
              value={v.authType}
              onChange={(e) => set('authType', e.currentTarget.value as AuthType)}
            >
              <option value="none">None</option>
              <option value="bearer">Bearer token</option>
              <option value="basic">HTTP Basic</option>
              <option value="header">API key in a header</option>
              <option value="oauth2_client_credentials">OAuth2 client credentials</option>
            </select>
            {v.authType === 'basic' && text('username', 'Username')}
            {v.authType === 'header' && text('headerName', 'Header name')}
            {v.authType === 'oauth2_client_credentials' && (
              <>
                {text('tokenUrl', 'Token URL')}
                {text('clientId', 'Client id')}
                {text('scope', 'Scope (optional)')}
                {text('audience', 'Audience (optional)')}
              </>
            )}
            {v.authType !== 'none' && (
              <>
                <label>
                  {secretLabel}
                  <input
                    name="secret"
                    type="password"
                    autocomplete="off"
                    disabled={!canWrite}
                    placeholder={destination.auth?.type === v.authType ? 'unchanged: type to replace' : ''}
                    value={v.secret}
                    onInput={(e) => set('secret', e.currentTarget.value)}
                  />
                </label>
                <span class="hint">Stored encrypted; never shown again.</span>
              </>
            )}
          </fieldset>
        </div>
        <fieldset class="edit-col">
          <legend>Mutual TLS</legend>
          {tls?.clientCertificate ? (
            <p data-testid="client-certificate">
              Client certificate <strong>{tls.clientCertificate.subject}</strong> from{' '}
              {tls.clientCertificate.issuer}, valid until{' '}
              {new Date(tls.clientCertificate.notAfter).toLocaleDateString()}
              {destination.health.certificateExpiresAt && (
                <span class="mark mark-backing-up">ends within 14 days</span>
              )}
            </p>
          ) : (
            <p class="hint">No client certificate.</p>
          )}
          {tls?.ca && <p data-testid="tls-ca">CA {tls.ca.subject}</p>}
          {pem('clientCertificate', 'New client certificate (PEM)')}
          {pem('clientKey', 'Its private key (PEM, unencrypted)')}
          {pem('ca', 'CA of the receiver (PEM, optional)')}
          {tls && (
            <label class="check">
              <input
                type="checkbox"
                name="removeTls"
                disabled={!canWrite}
                checked={v.removeTls}
                onChange={(e) => set('removeTls', e.currentTarget.checked)}
              />
              Remove mutual TLS
            </label>
          )}
        </fieldset>
      </div>
      <SaveOutcome error={error} saved={saved} />
      {canWrite && (
        <button type="submit" class="save" disabled={busy}>
          {busy ? 'Saving…' : 'Save receiver settings'}
        </button>
      )}
    </form>
  );
}
