/**
 * What a destination's receiver wants besides the URL (docs/api.md "Custom headers and
 * credentials"): headers sent on every attempt, and a credential. The rules for their names
 * and values are written once here for the API's validation and the delivery that sends them.
 */

import { isSealedWithCurrent, type Keyring, openSecret, sealSecret } from './secret-box.ts';

/** A credential the receiver checks; its secret fields are stored sealed (docs/adr/0015). */
export type DestinationAuth =
  | { type: 'bearer'; token: string }
  | { type: 'basic'; username: string; password: string }
  | { type: 'header'; name: string; value: string }
  | OAuth2ClientCredentials;

/**
 * RFC 6749 §4.4: Sluice asks `tokenUrl` for an access token (client authentication by HTTP
 * Basic) and sends it as a bearer token (engine oauth-tokens.ts).
 */
export interface OAuth2ClientCredentials {
  type: 'oauth2_client_credentials';
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope?: string;
  audience?: string;
}

/** What answers show of a credential: its type and the fields that are not secret. */
export type PresentedAuth =
  | { type: 'bearer' }
  | { type: 'basic'; username: string }
  | { type: 'header'; name: string }
  | Omit<OAuth2ClientCredentials, 'clientSecret'>;

/** Headers sent on every attempt, by name as given (names compare without case). */
export type DestinationHeaders = Record<string, string>;

export const MAX_HEADERS = 20;
/** Every name and value of `headers` together, in bytes. */
export const MAX_HEADER_BYTES = 8 * 1_024;

/** Names Sluice sets itself or that frame the request: never a destination's. */
const RESERVED = new Set(['host', 'content-type', 'content-length', 'transfer-encoding', 'connection']);

/** An RFC 9110 token: a header's name. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Visible ASCII and spaces: a header's value (no control character, so no CR/LF). */
const VALUE = /^[\x20-\x7e]*$/;

/** Why `name` cannot be a header of a destination (undefined: it can); `auth`: one is set. */
export function headerNameProblem(name: string, auth: boolean): string | undefined {
  if (!TOKEN.test(name)) return 'must be a header name (an RFC 9110 token)';
  const lower = name.toLowerCase();
  if (RESERVED.has(lower)) return `${lower} is set by Sluice`;
  if (lower.startsWith('webhook-')) return 'webhook-* headers are set by Sluice (Standard Webhooks)';
  if (lower === 'authorization' && auth) return 'authorization is set by auth';
  return undefined;
}

/** Whether `value` may be a header's value: visible ASCII and spaces. */
export function isHeaderValue(value: string): boolean {
  return VALUE.test(value);
}

/** The bytes of every name and value of `headers`. */
export function headerBytes(headers: DestinationHeaders): number {
  let n = 0;
  for (const [name, value] of Object.entries(headers))
    n += Buffer.byteLength(name) + Buffer.byteLength(value);
  return n;
}

/**
 * The header a static credential sends, by its lower-case name. OAuth2's is the token of the
 * moment, added where the attempt is made (engine oauth-tokens.ts): none here.
 */
function authHeader(auth: DestinationAuth): [string, string] | undefined {
  switch (auth.type) {
    case 'bearer':
      return ['authorization', `Bearer ${auth.token}`];
    case 'basic':
      // RFC 7617 with charset="UTF-8": user-id ":" password, base64.
      return [
        'authorization',
        `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`,
      ];
    case 'header':
      return [auth.name.toLowerCase(), auth.value];
    case 'oauth2_client_credentials':
      return undefined;
  }
}

/** The request headers a destination adds to each attempt: its own, then its credential's. */
export function receiverHeaders(
  headers: DestinationHeaders,
  auth: DestinationAuth | null,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) out[name.toLowerCase()] = value;
  const credential = auth === null ? undefined : authHeader(auth);
  if (credential !== undefined) out[credential[0]] = credential[1];
  return out;
}

export function presentAuth(auth: DestinationAuth | null): PresentedAuth | null {
  if (auth === null) return null;
  switch (auth.type) {
    case 'bearer':
      return { type: 'bearer' };
    case 'basic':
      return { type: 'basic', username: auth.username };
    case 'header':
      return { type: 'header', name: auth.name };
    case 'oauth2_client_credentials': {
      const { clientSecret: _secret, ...shown } = auth;
      return shown;
    }
  }
}

/** The credential with its secret field sealed (`seal`) or opened (`open`) with `keyring`. */
export function mapAuthSecret(
  auth: DestinationAuth | null,
  keyring: Keyring,
  how: 'seal' | 'open',
): DestinationAuth | null {
  if (auth === null) return null;
  const f = how === 'seal' ? (s: string) => sealSecret(keyring, s) : (s: string) => openSecret(keyring, s);
  switch (auth.type) {
    case 'bearer':
      return { type: 'bearer', token: f(auth.token) };
    case 'basic':
      return { type: 'basic', username: auth.username, password: f(auth.password) };
    case 'header':
      return { type: 'header', name: auth.name, value: f(auth.value) };
    case 'oauth2_client_credentials':
      return { ...auth, clientSecret: f(auth.clientSecret) };
  }
}

/** The field of a credential that is secret (sealed at rest, never answered). */
function secretOf(auth: DestinationAuth): string {
  switch (auth.type) {
    case 'bearer':
      return auth.token;
    case 'basic':
      return auth.password;
    case 'header':
      return auth.value;
    case 'oauth2_client_credentials':
      return auth.clientSecret;
  }
}

/** The credential sealed with the keyring's sealing key, or undefined when it already is (at start). */
export function resealedAuth(auth: DestinationAuth, keyring: Keyring): DestinationAuth | undefined {
  if (isSealedWithCurrent(keyring, secretOf(auth))) return undefined;
  return mapAuthSecret(mapAuthSecret(auth, keyring, 'open'), keyring, 'seal') ?? undefined;
}
