/**
 * One HTTP attempt of one delivery (docs/design.md, flow 3), the same code in both shapes.
 * undici with one shared keep-alive Agent; redirects are not followed (undici's `request`
 * never follows them without an interceptor); the response body is read up to a cap and an
 * excerpt kept; every failure is typed by a stable code.
 */

import diagnostics from 'node:diagnostics_channel';
import { Socket } from 'node:net';
import { rootCertificates } from 'node:tls';
import { type AttemptResult, signatureHeader } from '@sluice/core';
import { Agent, buildConnector, errors, ProxyAgent, request } from 'undici';
import { checkResolvedHost, checkUrlHost, guardedLookup, type LookupFunction, NOT_ALLOWED } from './ssrf.ts';

export const USER_AGENT = 'Sluice/0.1.0';
/** The attempt's error code when the egress proxy failed it (not the receiver). */
export const PROXY_FAILED = 'proxy_failed';
const EXCERPT_BYTES = 1_024;
const READ_CAP_BYTES = 64 * 1_024;

/*
 * When a request is fully written to its socket (the send window bounds its arrival from
 * then on: docs/adr/0001-send-window.md). undici announces each request it creates on
 * `undici:request:create` and its last byte written on `undici:request:bodySent`. A request
 * is created inside the `request()` call when a connection is free; `claimNext` is set
 * around that call so the request is tied to its callback. A request created later (it
 * waited for a connection) is not tied to any: its arrival is then bounded by its response.
 */
const onWritten = new WeakMap<object, () => void>();
let claimNext: (() => void) | undefined;
let subscribed = false;

function subscribeOnce(): void {
  if (subscribed) return;
  subscribed = true;
  diagnostics.subscribe('undici:request:create', (message) => {
    if (claimNext === undefined) return;
    onWritten.set((message as { request: object }).request, claimNext);
    claimNext = undefined;
  });
  diagnostics.subscribe('undici:request:bodySent', (message) => {
    const { request } = message as { request: object };
    onWritten.get(request)?.();
    onWritten.delete(request);
  });
}

export interface DeliveryRequest {
  url: string;
  eventId: string;
  eventType: string;
  body: string;
  /** The delivery's place in its destination's order (`webhook-sequence`). */
  sequence: number;
  /** 1-based number of this request within its delivery (`webhook-attempt`). */
  attempt: number;
  secrets: readonly string[];
  /** The destination's own headers and its credential's, by lower-case name (`receiverHeaders`). */
  headers?: Readonly<Record<string, string>>;
  timeoutMs: number;
  /** The destination's client certificate and CA (`receiverTls`): a pool of its own. */
  tls?: ReceiverTls;
  /**
   * Sluice's own destination (the operator's alert URL, from config): not subject to the
   * SSRF guard, which protects the network from tenants' URLs (ADR 0009).
   */
  trusted?: boolean;
}

/** The TLS a request's connections are made with, named by `id` (a digest of the rest). */
export interface ReceiverTls {
  id: string;
  cert?: string;
  key?: string;
  ca?: string;
}

/** Most pools of client identities kept open; past it the least recently made is closed. */
const MAX_TLS_POOLS = 1_000;

/** Node's TLS options for `tls`: its certificate and key, its CA besides the system's. */
function tlsOptions(tls: ReceiverTls | undefined): { cert?: string; key?: string; ca?: string[] } {
  if (tls === undefined) return {};
  return {
    ...(tls.cert === undefined ? {} : { cert: tls.cert }),
    ...(tls.key === undefined ? {} : { key: tls.key }),
    // `ca` replaces the system's roots: they are given with it.
    ...(tls.ca === undefined ? {} : { ca: [...rootCertificates, tls.ca] }),
  };
}

export interface AttemptReport {
  result: AttemptResult;
  responseExcerpt: string | null;
  /**
   * When the attempt ended — its response read, or its error — on the wall clock (`Date.now`),
   * taken on the thread that made it. The send window ends the request's occupancy from here
   * as it did from the runner's own time of the end (docs/adr/0001-send-window.md: a response
   * comes after the receiver saw the request; an error is bounded as that ADR says), without
   * the delay of a busy main thread reading the report. Absent when the request was refused
   * before any connection.
   */
  endedAt?: number;
}

export interface DelivererOptions {
  allowPrivateNetworks: boolean;
  lookup?: LookupFunction | undefined;
  /** Most open connections per origin: at least the most requests in flight at once. */
  connections?: number;
  /**
   * `SLUICE_EGRESS_PROXY`: every attempt goes through this HTTP proxy, in a CONNECT tunnel
   * (also for `http:` URLs, so every answer is the receiver's), the proxy's own address exempt
   * from the guard; a destination's host is resolved and checked before the proxy is asked.
   */
  proxy?: string | undefined;
}

/** What the runner needs of whatever makes the HTTP request. `Deliverer` is one, `DeliveryThreads` another. */
export interface AttemptTransport {
  attempt(req: DeliveryRequest, nowSeconds: number, written?: (at: number) => void): Promise<AttemptReport>;
  close(): Promise<void>;
}

export class Deliverer implements AttemptTransport {
  private readonly allowPrivate: boolean;
  private readonly lookup: LookupFunction | undefined;
  /** `lookup` refusing forbidden addresses (at connect, or before a proxy is asked). */
  private readonly guarded: LookupFunction;
  private readonly connections: number;
  private readonly proxy: string | undefined;
  /**
   * One pool per attempt timeout, its connect timeout that timeout (`connectWithin`): a
   * connector is the Agent's, not a request's, so a destination's `timeoutMs` bounds its
   * connecting only in a pool of its own timeout. Destinations share the few timeouts they
   * use, and with them their connections to one origin.
   */
  private readonly agents = new Map<string, Agent | ProxyAgent>();
  /** For trusted requests only, made on first use: no guard at connect. */
  private unguarded: Agent | undefined;

  constructor(options: DelivererOptions) {
    this.allowPrivate = options.allowPrivateNetworks;
    this.lookup = options.lookup;
    this.guarded = guardedLookup(options.allowPrivateNetworks, options.lookup);
    this.connections = options.connections ?? 256;
    this.proxy = options.proxy;
    subscribeOnce();
  }

  /** The pool of a timeout, and of a client identity when `tls` names one. */
  private agentFor(timeoutMs: number, tls?: ReceiverTls): Agent | ProxyAgent {
    const name = tls === undefined ? String(timeoutMs) : `${timeoutMs}:${tls.id}`;
    let agent = this.agents.get(name);
    if (agent !== undefined) return agent;
    const shared = { connections: this.connections, keepAliveTimeout: 30_000, allowH2: false };
    const own = tlsOptions(tls);
    agent =
      this.proxy === undefined
        ? // HTTP/1.1 (`allowH2: false`): while its first connection is being made, a pool that
          // may speak h2 makes no other, so one handshake that never completes held every
          // attempt to its origin.
          new Agent({ ...shared, connect: connectWithin(timeoutMs, this.guarded, own) })
        : new ProxyAgent({
            ...shared,
            uri: this.proxy,
            proxyTunnel: true,
            connectTimeout: timeoutMs,
            ...(tls === undefined ? {} : { requestTls: own }),
          });
    if (tls !== undefined && this.agents.size >= MAX_TLS_POOLS) {
      // The oldest identity's pool goes (its requests in flight finish first).
      for (const [key, old] of this.agents)
        if (key.includes(':')) {
          this.agents.delete(key);
          old.close().catch(() => undefined);
          break;
        }
    }
    this.agents.set(name, agent);
    return agent;
  }

  /**
   * One attempt; `written` is called with the wall-clock time when the request is on the
   * socket, if that is known.
   */
  async attempt(
    req: DeliveryRequest,
    nowSeconds: number,
    written?: (at: number) => void,
  ): Promise<AttemptReport> {
    const url = new URL(req.url);
    if (!req.trusted) {
      const refused = await this.refusal(url);
      if (refused)
        return { result: { kind: 'error', ...refused.error }, responseExcerpt: null, ...refused.at };
    }
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      // The destination's (the API refuses names Sluice sets; a user-agent of its own wins).
      ...req.headers,
      'webhook-id': req.eventId,
      'webhook-timestamp': String(nowSeconds),
      'webhook-event-type': req.eventType,
      // Not signed (the signature covers id, timestamp and body, as Standard Webhooks
      // defines it): hints for reordering and deduplication (docs/receivers.md).
      'webhook-sequence': String(req.sequence),
      'webhook-attempt': String(req.attempt),
      'webhook-signature': signatureHeader(req.secrets, {
        id: req.eventId,
        timestamp: nowSeconds,
        body: req.body,
      }),
    };
    // The whole attempt's deadline (startDeadline).
    const deadline = startDeadline(req.timeoutMs);
    try {
      claimNext = written && (() => written(Date.now()));
      const pending = request(url, {
        method: 'POST',
        dispatcher: req.trusted ? this.trustedAgent() : this.agentFor(req.timeoutMs, req.tls),
        headers,
        body: req.body,
        headersTimeout: req.timeoutMs,
        bodyTimeout: req.timeoutMs,
        signal: deadline.signal,
      });
      claimNext = undefined;
      const res = await deadline.race(pending);
      // The abort ends a body still coming: its read throws.
      const excerpt = await readExcerpt(res.body);
      const retryAfter = res.headers['retry-after'];
      return {
        result: {
          kind: 'response',
          statusCode: res.statusCode,
          retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
        },
        responseExcerpt: excerpt,
        endedAt: Date.now(),
      };
    } catch (err) {
      claimNext = undefined;
      return {
        result: { kind: 'error', ...(this.proxy !== undefined ? describeProxied(err) : describeError(err)) },
        responseExcerpt: null,
        endedAt: Date.now(),
      };
    } finally {
      deadline.clear();
    }
  }

  /**
   * Why a tenant's URL may not be reached (undefined: it may). `at`: when, if a lookup ran
   * (through a proxy our lookup never runs at connect, so the host is resolved and checked here).
   */
  private async refusal(
    url: URL,
  ): Promise<{ error: { code: string; message: string }; at: { endedAt?: number } } | undefined> {
    const refused = checkUrlHost(url, this.allowPrivate);
    if (refused) return { error: { code: NOT_ALLOWED, message: refused.message }, at: {} };
    if (this.proxy !== undefined && !this.allowPrivate) {
      const failed = await checkResolvedHost(url, this.guarded);
      if (failed) return { error: failed, at: { endedAt: Date.now() } };
    }
    return undefined;
  }

  /**
   * A form POST to an OAuth2 token endpoint (oauth-tokens.ts): the guard, the pools, the
   * proxy and the deadline of an attempt, the answer's body read up to 64 KiB.
   */
  async post(
    target: string,
    headers: Record<string, string>,
    body: string,
    timeoutMs: number,
  ): Promise<{ statusCode: number; body: string } | { error: { code: string; message: string } }> {
    const url = new URL(target);
    const refused = await this.refusal(url);
    if (refused) return { error: refused.error };
    const deadline = startDeadline(timeoutMs);
    try {
      const pending = request(url, {
        method: 'POST',
        dispatcher: this.agentFor(timeoutMs),
        headers: { 'user-agent': USER_AGENT, ...headers },
        body,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: deadline.signal,
      });
      const res = await deadline.race(pending);
      const chunks: Buffer[] = [];
      let read = 0;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        read += chunk.length;
        if (read > READ_CAP_BYTES) {
          res.body.destroy();
          return { error: { code: 'response_too_large', message: `more than ${READ_CAP_BYTES} bytes` } };
        }
        chunks.push(chunk);
      }
      return { statusCode: res.statusCode, body: Buffer.concat(chunks).toString('utf8') };
    } catch (err) {
      return { error: this.proxy !== undefined ? describeProxied(err) : describeError(err) };
    } finally {
      deadline.clear();
    }
  }

  private trustedAgent(): Agent {
    this.unguarded ??= new Agent({
      connections: 8,
      keepAliveTimeout: 30_000,
      ...(this.lookup === undefined ? {} : { connect: { lookup: this.lookup } }),
    });
    return this.unguarded;
  }

  async close(): Promise<void> {
    await Promise.all([...this.agents.values()].map((a) => a.close()));
    await this.unguarded?.close();
  }
}

/**
 * A request's whole deadline, cleared when it is over. (`AbortSignal.timeout` cannot be
 * cleared: each request left a timer that fired `timeoutMs` later and built a DOMException —
 * the CPU of an idle box for a quarter of a minute after every busy one.) undici only notes an
 * abort of a request still waiting for its connection, so `race` also ends at the deadline
 * itself; the pool's connect timeout, the same `timeoutMs`, closes the socket being connected.
 */
function startDeadline(timeoutMs: number): {
  signal: AbortSignal;
  race<T>(pending: Promise<T>): Promise<T>;
  clear(): void;
} {
  const controller = new AbortController();
  let expire: (reason: unknown) => void = () => undefined;
  const expired = new Promise<never>((_, reject) => {
    expire = reject;
  });
  expired.catch(() => undefined);
  const timer = setTimeout(() => {
    const reason = new DOMException(`no response within ${timeoutMs} ms`, 'TimeoutError');
    controller.abort(reason);
    expire(reason);
  }, timeoutMs);
  return {
    signal: controller.signal,
    race: (pending) => {
      pending.catch(() => undefined);
      return Promise.race([pending, expired]);
    },
    clear: () => clearTimeout(timer),
  };
}

/** Errors of connecting to the proxy: through it, no connection goes anywhere else. */
const PROXY_UNREACHABLE = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * A failure through the proxy: the proxy's own (it refused the tunnel, or could not be
 * reached: every connection goes to it) is `proxy_failed`; a tunnel refused with 502 or 504,
 * the proxy's word that the receiver could not be reached, is the receiver's failure.
 */
function describeProxied(err: unknown): { code: string; message: string } {
  const described = describeError(err);
  if (described.code === 'timeout' || described.code === NOT_ALLOWED) return described;
  const status = /^Proxy response \((\d+)\)/.exec(described.message)?.[1];
  if (status === '502' || status === '504')
    return { code: 'request_failed', message: `the proxy could not reach the receiver (${status})` };
  if (status !== undefined || PROXY_UNREACHABLE.has(described.code))
    return { code: PROXY_FAILED, message: `egress proxy: ${described.message}` };
  return described;
}

/**
 * undici's connector, with a socket not connected (its TLS handshake included) within
 * `timeoutMs` destroyed then. undici's own connect timeout (kept as the backstop) runs on
 * timers that tick every 500 ms, so alone it let a socket outlive the attempt's deadline by
 * up to that much. The connector returns its socket (its typings say nothing): checked.
 */
function connectWithin(
  timeoutMs: number,
  lookup: LookupFunction,
  tls: { cert?: string; key?: string; ca?: string[] } = {},
): buildConnector.connector {
  const connect = buildConnector({ lookup, allowH2: false, timeout: timeoutMs, ...tls });
  return (options, callback) => {
    let settled = false;
    const socket: unknown = connect(options, (err, connected) => {
      settled = true;
      clearTimeout(timer);
      if (err !== null || connected === null) callback(err ?? new Error('no socket'), null);
      else callback(null, connected);
    });
    const timer = setTimeout(() => {
      if (!settled && socket instanceof Socket)
        socket.destroy(new errors.ConnectTimeoutError(`not connected within ${timeoutMs} ms`));
    }, timeoutMs);
  };
}

async function readExcerpt(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string | null> {
  const chunks: Buffer[] = [];
  let read = 0;
  for await (const chunk of body) {
    if (read < EXCERPT_BYTES) chunks.push(chunk);
    read += chunk.length;
    if (read > READ_CAP_BYTES) {
      body.destroy();
      break;
    }
  }
  if (read === 0) return null;
  return Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8');
}

/** A stable code and a message for a failed request: ours, undici's `UND_ERR_*`, or node's `E*`. */
export function describeError(err: unknown): { code: string; message: string } {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (code === NOT_ALLOWED) return { code, message: e.message };
    if (
      e.name === 'TimeoutError' ||
      e instanceof errors.ConnectTimeoutError ||
      e instanceof errors.HeadersTimeoutError ||
      e instanceof errors.BodyTimeoutError
    ) {
      return { code: 'timeout', message: e.message };
    }
    if (typeof code === 'string') return { code, message: e.message };
  }
  return { code: 'request_failed', message: err instanceof Error ? err.message : String(err) };
}
