/**
 * One request to the API over an injectable `fetch`: bearer token, JSON in and out, a
 * timeout, and every failure turned into a `SluiceError`. Nothing here knows any route.
 */

import { parseRetryAfterHeader, SluiceError } from './errors.ts';

/** The part of a `fetch` response the client reads. */
export interface FetchResponse {
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  text(): Promise<string>;
}

/** The part of `fetch` the client calls: the global `fetch` and undici's both fit. */
export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string; signal: AbortSignal },
) => Promise<FetchResponse>;

/** Query values; `undefined` ones are left out. */
export type Query = Record<string, string | number | boolean | undefined>;

/** Per-call options, accepted as the last argument of every method. */
export interface CallOptions {
  /** Aborts the request (the error's code is `aborted`). */
  signal?: AbortSignal;
  /** Overrides the client's timeout for this call, in ms; 0 for none. */
  timeout?: number;
}

/** A call's own options, and nothing else of an options object that carries more (`tenantId`). */
export const pick = ({ signal, timeout }: CallOptions = {}): CallOptions => ({
  ...(signal === undefined ? {} : { signal }),
  ...(timeout === undefined ? {} : { timeout }),
});

export interface RequestSpec extends CallOptions {
  query?: Query;
  /** Sent as JSON (`content-type: application/json`). */
  body?: unknown;
  /** Sent as is, instead of `body`: for requests the typed methods cannot express. */
  rawBody?: string;
  /** Extra headers; they override the client's (`authorization`, `content-type`). */
  headers?: Record<string, string>;
}

export interface HttpConfig {
  baseUrl: string;
  token: string | undefined;
  fetch: FetchLike;
  timeout: number;
  headers: Record<string, string>;
}

function buildUrl(baseUrl: string, path: string, query: Query | undefined): string {
  const url = new URL(path.replace(/^\//, ''), baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value !== undefined) url.searchParams.set(key, String(value));
  }
  return url.toString();
}

/** `encodeURIComponent` for an id in a path: an id never changes the route. */
export const seg = (id: string): string => encodeURIComponent(id);

function parse(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isErrorBody(body: unknown): body is { error: { code: string; message: string; details?: unknown } } {
  if (typeof body !== 'object' || body === null || !('error' in body)) return false;
  const error = (body as { error: unknown }).error;
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as { code?: unknown }).code === 'string' &&
    typeof (error as { message?: unknown }).message === 'string'
  );
}

/** Sends one request; resolves with the parsed JSON body (undefined when empty). */
export async function send<T>(config: HttpConfig, method: string, path: string, init: RequestSpec = {}) {
  const url = buildUrl(config.baseUrl, path, init.query);
  const headers: Record<string, string> = { accept: 'application/json', ...config.headers };
  if (config.token !== undefined) headers.authorization = `Bearer ${config.token}`;
  let body: string | undefined;
  if (init.rawBody !== undefined) body = init.rawBody;
  else if (init.body !== undefined) body = JSON.stringify(init.body);
  if (body !== undefined) headers['content-type'] = 'application/json';
  Object.assign(headers, init.headers);

  const timeoutMs = init.timeout ?? config.timeout;
  // A deadline cleared when the request is over (`AbortSignal.timeout` cannot be: every
  // request would leave a timer behind to fire long after its answer).
  const deadline = timeoutMs > 0 && Number.isFinite(timeoutMs) ? new AbortController() : undefined;
  const timer = deadline && setTimeout(() => deadline.abort(), timeoutMs);
  const signals = [deadline?.signal, init.signal].filter((s): s is AbortSignal => s !== undefined);
  const signal = signals.length === 1 ? signals[0]! : AbortSignal.any(signals);

  const fail = (
    status: number,
    code: string,
    message: string,
    extra: { details?: unknown; cause?: unknown; retryAfterSeconds?: number | null },
  ) => new SluiceError({ status, code, message, method, url, ...extra });

  let status: number;
  let text: string;
  let retryAfter: string | null;
  try {
    const res = await config.fetch(url, { method, headers, signal, ...(body === undefined ? {} : { body }) });
    status = res.status;
    retryAfter = res.headers.get('retry-after');
    text = await res.text();
  } catch (cause) {
    if (deadline?.signal.aborted) {
      throw fail(0, 'timeout', `${method} ${url}: no answer within ${timeoutMs} ms`, { cause });
    }
    if (init.signal?.aborted) throw fail(0, 'aborted', `${method} ${url}: aborted`, { cause });
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw fail(0, 'network_error', `${method} ${url}: ${reason}`, { cause });
  } finally {
    clearTimeout(timer);
  }

  const parsed = parse(text);
  if (status >= 200 && status < 300) {
    if (parsed === undefined && text !== '') {
      throw fail(status, 'unexpected_response', `${method} ${url}: the answer is not JSON`, {
        details: { body: text.slice(0, 500) },
      });
    }
    return parsed as T;
  }
  if (isErrorBody(parsed)) {
    const { code, message, details } = parsed.error;
    throw fail(status, code, message, {
      details: details ?? null,
      retryAfterSeconds: parseRetryAfterHeader(retryAfter),
    });
  }
  throw fail(status, 'unexpected_response', `${method} ${url}: HTTP ${status}`, {
    details: { body: text.slice(0, 500) },
  });
}
