/**
 * OAuth2 client credentials (RFC 6749 §4.4) for destinations whose `auth` asks for it
 * (docs/api.md "OAuth2 client credentials"), the same in both shapes:
 *
 * - a token is asked of `tokenUrl` (client authentication by HTTP Basic, §2.3.1; the form
 *   body `grant_type=client_credentials` with `scope` and `audience` when given), through the
 *   guard, the pools, the proxy and the destination's `timeoutMs`, as an attempt is;
 * - it is cached until a margin before `expires_in` runs out (a tenth of the lifetime, at
 *   most 60 s) in a `TokenCache`: Redis in the distributed shape, so every worker of the
 *   deployment uses the token one of them got; memory in the single box;
 * - one token request per destination in flight (a lock in the cache, and one promise per
 *   process), the others wait for its token; after a failed one, none for `failureHoldMs`
 *   (its error answers meanwhile);
 * - each process uses a token it read for a few seconds without reading the cache again
 *   (`LOCAL_MS`: a Redis round trip per attempt otherwise);
 * - a `401` from the receiver drops the token it was sent with (`rejected`).
 *
 * A failure is the attempt's `auth_failed` (the runner: retried with the destination's
 * backoff, not the receiver's failure for the breaker, not against its rate limit).
 */

import { createHash, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { OAuth2ClientCredentials } from '@sluice/core';

/** The attempt's error code when its token could not be had. */
export const AUTH_FAILED = 'auth_failed';

/** How long a failed token request holds new ones back. */
const FAILURE_HOLD_MS = 5_000;
/**
 * How long a process uses a token it read or got without asking the cache again: the cache is
 * a round trip to Redis, and a destination at full speed makes thousands of attempts a second.
 * A token another worker dropped (its receiver refused it) is used here at most this much
 * longer, and a refusal here drops it at once.
 */
const LOCAL_MS = 5_000;
/** How often a process waiting for another's token request looks for its token. */
const POLL_MS = 50;
/** The longest a token is kept when the endpoint says nothing of its lifetime. */
const DEFAULT_LIFETIME_MS = 3_600_000;
/** The most of a token's lifetime given up to use it only while it is surely good. */
const MAX_MARGIN_MS = 60_000;

export interface CachedToken {
  token: string;
  until: number;
}

/** Where tokens are kept by key: shared by every worker (Redis), or the one process's (memory). */
export interface TokenCache {
  /** The key's token and when it stops being used (ms since the epoch). */
  get(key: string): Promise<CachedToken | null>;
  /** Keeps the token until `until`. */
  set(key: string, token: string, until: number): Promise<void>;
  /** Drops the key's token if it is still `token`. */
  drop(key: string, token: string): Promise<void>;
  /** Takes the key's lock (one token request in flight) for `ms`, as `owner`; false: another holds it. */
  lock(key: string, owner: string, ms: number): Promise<boolean>;
  unlock(key: string, owner: string): Promise<void>;
  /** The last failed request's error while it holds new requests back. */
  failure(key: string): Promise<string | null>;
  fail(key: string, message: string, ms: number): Promise<void>;
}

/** What makes the token request: `Deliverer.post`. */
export type TokenPost = (
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
) => Promise<{ statusCode: number; body: string } | { error: { code: string; message: string } }>;

export type TokenAnswer = { token: string } | { error: string };

/** How long a token of `expiresIn` seconds is used: its lifetime less a tenth, at most 60 s. */
export function tokenTtlMs(expiresIn: unknown): number {
  const lifetime =
    typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0
      ? expiresIn * 1_000
      : DEFAULT_LIFETIME_MS;
  return Math.max(1, Math.floor(lifetime - Math.min(MAX_MARGIN_MS, lifetime / 10)));
}

/** The cache key of a destination's credential: a changed credential never uses the old one's token. */
export function tokenKey(destinationId: string, auth: OAuth2ClientCredentials): string {
  const digest = createHash('sha256')
    .update(
      [auth.tokenUrl, auth.clientId, auth.clientSecret, auth.scope ?? '', auth.audience ?? ''].join('\0'),
    )
    .digest('base64url')
    .slice(0, 22);
  return `${destinationId}:${digest}`;
}

/** RFC 6749 §2.3.1: the client id and secret form-encoded, then HTTP Basic. */
function basicOf(auth: OAuth2ClientCredentials): string {
  const encode = (s: string) => new URLSearchParams({ s }).toString().slice(2);
  return `Basic ${Buffer.from(`${encode(auth.clientId)}:${encode(auth.clientSecret)}`).toString('base64')}`;
}

/** The endpoint's words of a refusal (RFC 6749 §5.2 `error`, `error_description`), short. */
function refusalOf(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: unknown; error_description?: unknown };
    const words = [parsed.error, parsed.error_description].filter((w) => typeof w === 'string');
    if (words.length > 0) return `: ${words.join(': ').slice(0, 200)}`;
  } catch {
    // not JSON: the status says it
  }
  return '';
}

export interface OAuthTokensOptions {
  cache: TokenCache;
  post: TokenPost;
  clock?: () => number;
  /** Each token request, by result (`sluice_oauth_token_requests_total`). */
  counted?: (result: 'ok' | 'error') => void;
  failureHoldMs?: number;
}

export class OAuthTokens {
  private readonly cache: TokenCache;
  private readonly post: TokenPost;
  private readonly clock: () => number;
  private readonly counted: (result: 'ok' | 'error') => void;
  private readonly failureHoldMs: number;
  /** This process's token requests (or waits for another's) by key: one each. */
  private readonly pending = new Map<string, Promise<TokenAnswer>>();
  /** Tokens in use here, by key, until when (LOCAL_MS, or less when the token expires sooner). */
  private readonly local = new Map<string, { token: string; until: number }>();
  /** Each credential's key, computed once (a destination's credential is one object until it changes). */
  private readonly keys = new WeakMap<OAuth2ClientCredentials, string>();
  private readonly owner = randomBytes(9).toString('base64url');

  constructor(options: OAuthTokensOptions) {
    this.cache = options.cache;
    this.post = options.post;
    this.clock = options.clock ?? Date.now;
    this.counted = options.counted ?? (() => undefined);
    this.failureHoldMs = options.failureHoldMs ?? FAILURE_HOLD_MS;
  }

  /** The access token to send now, or why there is none. */
  async bearer(
    destinationId: string,
    auth: OAuth2ClientCredentials,
    timeoutMs: number,
  ): Promise<TokenAnswer> {
    const key = this.keyOf(destinationId, auth);
    const mine = this.local.get(key);
    if (mine !== undefined && mine.until > this.clock()) return { token: mine.token };
    const cached = await this.cache.get(key);
    if (cached !== null) return this.remember(key, cached);
    let answer = this.pending.get(key);
    if (answer === undefined) {
      answer = this.obtain(key, auth, timeoutMs).finally(() => this.pending.delete(key));
      this.pending.set(key, answer);
    }
    return answer;
  }

  /** The receiver answered 401 to `token`: the next attempt gets a new one. */
  async rejected(destinationId: string, auth: OAuth2ClientCredentials, token: string): Promise<void> {
    const key = this.keyOf(destinationId, auth);
    if (this.local.get(key)?.token === token) this.local.delete(key);
    await this.cache.drop(key, token);
  }

  private keyOf(destinationId: string, auth: OAuth2ClientCredentials): string {
    let key = this.keys.get(auth);
    if (key === undefined) {
      key = tokenKey(destinationId, auth);
      this.keys.set(auth, key);
    }
    return key;
  }

  /** Uses `cached` here for LOCAL_MS, never past its own time. */
  private remember(key: string, cached: CachedToken): { token: string } {
    const now = this.clock();
    // Deleted destinations' tokens go once they expire, whenever there are many.
    if (this.local.size >= 1_000) for (const [k, v] of this.local) if (v.until <= now) this.local.delete(k);
    this.local.set(key, { token: cached.token, until: Math.min(now + LOCAL_MS, cached.until) });
    return { token: cached.token };
  }

  private async obtain(key: string, auth: OAuth2ClientCredentials, timeoutMs: number): Promise<TokenAnswer> {
    const deadline = this.clock() + timeoutMs;
    for (;;) {
      const failed = await this.cache.failure(key);
      if (failed !== null) return { error: failed };
      // The lock outlives a request that ends at its deadline: its holder writes the outcome.
      if (await this.cache.lock(key, this.owner, timeoutMs + 1_000)) {
        try {
          const again = await this.cache.get(key); // got by another while this one looked
          if (again !== null) return this.remember(key, again);
          const got = await this.request(auth, timeoutMs);
          this.counted('token' in got ? 'ok' : 'error');
          if (!('token' in got)) {
            await this.cache.fail(key, got.error, this.failureHoldMs);
            return got;
          }
          const until = this.clock() + got.ttlMs;
          await this.cache.set(key, got.token, until);
          return this.remember(key, { token: got.token, until });
        } finally {
          await this.cache.unlock(key, this.owner).catch(() => undefined);
        }
      }
      // Another worker asks: its token (or its failure) comes within its deadline.
      if (this.clock() >= deadline)
        return { error: `no token within ${timeoutMs} ms: another worker's token request is still open` };
      await sleep(POLL_MS);
      const token = await this.cache.get(key);
      if (token !== null) return this.remember(key, token);
    }
  }

  private async request(
    auth: OAuth2ClientCredentials,
    timeoutMs: number,
  ): Promise<{ token: string; ttlMs: number } | { error: string }> {
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (auth.scope !== undefined) form.set('scope', auth.scope);
    if (auth.audience !== undefined) form.set('audience', auth.audience);
    const answer = await this.post(
      auth.tokenUrl,
      {
        authorization: basicOf(auth),
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      form.toString(),
      timeoutMs,
    );
    if ('error' in answer) return { error: `token endpoint: ${answer.error.code}: ${answer.error.message}` };
    const { statusCode, body } = answer;
    if (statusCode < 200 || statusCode > 299)
      return { error: `token endpoint answered ${statusCode}${refusalOf(body)}` };
    let parsed: { access_token?: unknown; token_type?: unknown; expires_in?: unknown };
    try {
      parsed = JSON.parse(body) as typeof parsed;
    } catch {
      return { error: `token endpoint answered ${statusCode} without a JSON body` };
    }
    const token = parsed.access_token;
    // A token goes in a header: visible ASCII only (RFC 6750's b64token is narrower still).
    if (typeof token !== 'string' || !/^[\x21-\x7e]+$/.test(token))
      return { error: `token endpoint answered ${statusCode} without a usable access_token` };
    if (typeof parsed.token_type === 'string' && parsed.token_type.toLowerCase() !== 'bearer')
      return { error: `token endpoint gave a ${parsed.token_type.slice(0, 40)} token, not a bearer token` };
    return { token, ttlMs: tokenTtlMs(parsed.expires_in) };
  }
}

/** The single box's cache: one process, so memory (a token is not kept across a restart). */
export class MemoryTokenCache implements TokenCache {
  private readonly clock: () => number;
  private readonly tokens = new Map<string, { token: string; until: number }>();
  private readonly locks = new Map<string, { owner: string; until: number }>();
  private readonly failures = new Map<string, { message: string; until: number }>();

  constructor(clock: () => number = Date.now) {
    this.clock = clock;
  }

  private live<T extends { until: number }>(map: Map<string, T>, key: string): T | undefined {
    const entry = map.get(key);
    if (entry !== undefined && entry.until <= this.clock()) {
      map.delete(key);
      return undefined;
    }
    return entry;
  }

  async get(key: string): Promise<CachedToken | null> {
    return this.live(this.tokens, key) ?? null;
  }

  async set(key: string, token: string, until: number): Promise<void> {
    // Deleted destinations' tokens go once they expire, whenever there are many.
    if (this.tokens.size >= 1_000) for (const k of [...this.tokens.keys()]) this.live(this.tokens, k);
    this.tokens.set(key, { token, until });
  }

  async drop(key: string, token: string): Promise<void> {
    if (this.tokens.get(key)?.token === token) this.tokens.delete(key);
  }

  async lock(key: string, owner: string, ms: number): Promise<boolean> {
    if (this.live(this.locks, key) !== undefined) return false;
    this.locks.set(key, { owner, until: this.clock() + ms });
    return true;
  }

  async unlock(key: string, owner: string): Promise<void> {
    if (this.locks.get(key)?.owner === owner) this.locks.delete(key);
  }

  async failure(key: string): Promise<string | null> {
    return this.live(this.failures, key)?.message ?? null;
  }

  async fail(key: string, message: string, ms: number): Promise<void> {
    this.failures.set(key, { message, until: this.clock() + ms });
  }
}
