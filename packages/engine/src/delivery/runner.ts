/**
 * One published delivery, from the start of its request to its completion: the same code
 * in the single box's in-process queue and in the distributed delivery worker.
 *
 *   [wait for notBefore] → [OAuth2 token] → [transform] → start (queued → in flight, into
 *   the window) → signed POST
 *   → outcome (decideOutcome)
 *   → completion buffered for the batched write
 *
 *   start refused (the window is full under a limit lowered since the publish, or the pace
 *   state is being rebuilt after a loss of Redis)
 *   → back to pending in the store, the destination woken: its next tick publishes it
 *
 *   no token, or the transform failed or cancelled: an attempt without a request (neither
 *   started nor counted against the limit) → retried (`auth_failed`), dead at once
 *   (`transform_failed`: its code is deterministic) or cancelled (`transform_cancelled`)
 */

import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type DestinationTls,
  decideOutcome,
  newId,
  PERIOD_MS,
  ratePlan,
  receiverHeaders,
  retryDelayMs,
  transition,
  windowCap,
} from '@sluice/core';
import type { ClaimedDelivery, Destination, Store } from '@sluice/store';
import type { DestinationCache } from '../destination-cache.ts';
import type { EngineMetrics } from '../ops/metrics.ts';
import { isSystemDestination } from '../ops/system.ts';
import { adaptiveFeedback } from '../pace/adaptive-feedback.ts';
import type { AttemptPacing } from '../pace/pacing.ts';
import { TRANSFORM_CANCELLED, TRANSFORM_FAILED } from '../transform/transform-output.ts';
import type { Transforms } from '../transform/transforms.ts';
import type { CompletionWriter } from './completion-writer.ts';
import { type AttemptReport, type AttemptTransport, PROXY_FAILED, type ReceiverTls } from './deliver.ts';
import { AUTH_FAILED, type OAuthTokens } from './oauth-tokens.ts';

/** The secrets that sign now: the current one and any rotated out less than 24 h ago. */
function signingSecrets(destination: Destination, now: number): string[] {
  return destination.secrets.filter((s) => s.expiresAt === null || s.expiresAt > now).map((s) => s.secret);
}

/** Each destination's TLS as the transport takes it, made once per `tls` value (the cache keeps it until it changes). */
const tlsOfDestination = new WeakMap<DestinationTls, ReceiverTls>();

function receiverTls(tls: DestinationTls | null): ReceiverTls | undefined {
  if (tls === null) return undefined;
  let made = tlsOfDestination.get(tls);
  if (made === undefined) {
    const { clientCertificate: cert, clientKey: key, ca } = tls;
    const id = createHash('sha256')
      .update([cert ?? '', key ?? '', ca ?? ''].join('\0'))
      .digest('base64url')
      .slice(0, 22);
    made = {
      id,
      ...(cert === undefined ? {} : { cert }),
      ...(key === undefined ? {} : { key }),
      ...(ca === undefined ? {} : { ca }),
    };
    tlsOfDestination.set(tls, made);
  }
  return made;
}

/**
 * The request headers a destination adds (its own, its credential's, an OAuth2 token), made
 * once per destination value and token (the cache hands out one object until it changes):
 * not rebuilt, and a Basic credential not encoded again, on every attempt.
 */
const headersOfDestination = new WeakMap<
  Destination,
  { token: string | undefined; headers: Record<string, string> }
>();

function headersOf(destination: Destination, token: string | undefined): Record<string, string> {
  const made = headersOfDestination.get(destination);
  if (made !== undefined && made.token === token) return made.headers;
  const headers = withToken(receiverHeaders(destination.headers, destination.auth), token);
  headersOfDestination.set(destination, { token, headers });
  return headers;
}

/** A destination's own headers and its credential's, with an OAuth2 token when it has one. */
function withToken(own: Record<string, string>, token: string | undefined): Record<string, string> {
  return token === undefined ? own : { ...own, authorization: `Bearer ${token}` };
}

export interface RunnerDeps {
  destinations: DestinationCache;
  pacing: AttemptPacing;
  deliverer: AttemptTransport;
  completions: CompletionWriter;
  metrics: EngineMetrics;
  clock: () => number;
  random: () => number;
  /** Where a delivery that may not start goes back to pending. */
  store: Pick<Store, 'releaseClaims'>;
  /** The destination has pending work again (a released delivery). */
  wake(destinationId: string): void;
  /** Access tokens of OAuth2 credentials (absent: such a destination's attempts fail `auth_failed`). */
  tokens?: OAuthTokens;
  /** Destinations' transforms (absent: such a destination's deliveries end `transform_failed`). */
  transforms?: Transforms;
}

/** How an attempt without a request ends: retried as usual, dead at once, or cancelled. */
type Unsent = 'retry' | 'exhaust' | 'cancel';

export class DeliveryRunner {
  private readonly deps: RunnerDeps;

  constructor(deps: RunnerDeps) {
    this.deps = deps;
  }

  /**
   * Runs one attempt; resolves once its completion is buffered, with `written`, which
   * resolves once the completion's batch committed. Nothing to write: `written` is undefined.
   * `rerun`: its job ran before on a worker that died (the distributed delivery queue).
   */
  async run(delivery: ClaimedDelivery, rerun = false): Promise<{ written?: Promise<void> }> {
    const { pacing, deliverer, clock, metrics, destinations } = this.deps;
    // Live settings (url, secrets, timeout) as of the start of the request. A destination
    // deleted since the publish is gone: its deliveries are already cancelled.
    const destination = await destinations.get(delivery.destinationId);
    if (destination === undefined) {
      await pacing.drop(delivery.destinationId, delivery.id);
      return {};
    }
    const periodMs = PERIOD_MS[destination.rateLimit.period];
    // Published ahead of its window's room (core tick.ts publishAhead): its slot frees then.
    // Nothing counted it as started before; starting sooner would break the limit.
    if (delivery.notBefore !== undefined)
      for (let wait = delivery.notBefore - clock(); wait > 0; wait = delivery.notBefore - clock())
        await sleep(Math.ceil(wait));
    // An OAuth2 credential's token before the request takes its place in the window: a token
    // request is not sent to the receiver and does not count against its limit.
    const { auth } = destination;
    let token: string | undefined;
    if (auth?.type === 'oauth2_client_credentials') {
      const answer =
        this.deps.tokens === undefined
          ? { error: 'no token source in this process' }
          : await this.deps.tokens.bearer(destination.id, auth, destination.timeoutMs);
      if ('error' in answer)
        return this.unsent(
          delivery,
          destination,
          { code: AUTH_FAILED, message: answer.error },
          rerun,
          'retry',
        );
      token = answer.token;
    }
    // The transform in force now (a replay after a fix sends the fixed shape), on the clock of
    // the event's acceptance, before the request takes its place in the window.
    let body = delivery.payload;
    let headers = headersOf(destination, token);
    if (destination.transform !== null) {
      const shaped =
        this.deps.transforms === undefined
          ? ({ kind: 'failed', message: 'no transform sandbox in this process' } as const)
          : await this.deps.transforms.apply(
              destination,
              destination.transform.code,
              delivery.eventType,
              delivery.payload,
              delivery.eventCreatedAt,
            );
      if (shaped.kind === 'cancel') {
        const message = "cancelled by the destination's transform: no request was made";
        return this.unsent(delivery, destination, { code: TRANSFORM_CANCELLED, message }, rerun, 'cancel');
      }
      // The code failed: dead at once (it is deterministic); the sandbox failed: retried.
      if (shaped.kind !== 'send') {
        const ends = shaped.kind === 'failed' ? 'exhaust' : 'retry';
        return this.unsent(
          delivery,
          destination,
          { code: TRANSFORM_FAILED, message: shaped.message },
          rerun,
          ends,
        );
      }
      body = shaped.body;
      if (shaped.headers !== destination.headers)
        headers = withToken(receiverHeaders(shaped.headers, destination.auth), token);
    }
    const startedAt = clock();
    /** A wall-clock time (`Date.now`, as the transport stamps them) on `clock`. */
    const onClock = (wall: number) => wall + (clock() - Date.now());
    // The limit in force now, not the one the tick published under: lowered since, the window
    // may have no room for this request. It then goes back to pending (a claim the tick made,
    // undone) and the next tick publishes it under the new limit; waiting here instead would
    // hold a request slot for as long as the new limit makes it wait, and a whole run of the
    // old limit could be waiting.
    const cap = windowCap(ratePlan(destination.rateLimit));
    const pace = await pacing.start(
      delivery.destinationId,
      delivery.id,
      periodMs,
      destination.timeoutMs,
      startedAt,
      cap,
    );
    if (pace === null) {
      // Pending before it leaves `queued`: meanwhile it is over-counted, never under-counted.
      // Run again after its worker died, it may have been sent: then it counts as an attempt,
      // so its repeat is numbered one higher.
      const attempted = rerun && (await pacing.startedBefore?.(delivery.destinationId, delivery.id)) === true;
      await this.deps.store.releaseClaims([delivery.id], clock(), attempted);
      await pacing.drop(delivery.destinationId, delivery.id);
      metrics.releasedStarts.inc();
      this.deps.wake(delivery.destinationId);
      return {};
    }
    // A job run again after its worker died (`rerun`) carries claims that worker may have
    // started: a delivery whose request it started is a repeat, numbered one past the request
    // it repeats (whose outcome was never recorded), so `webhook-attempt` goes up by one.
    const attemptNo = delivery.attempts + (rerun && pace.startedBefore === true ? 2 : 1);
    let finishedAt = startedAt;
    let report: AttemptReport | undefined;
    try {
      report = await deliverer.attempt(
        {
          url: destination.url,
          eventId: delivery.eventId,
          eventType: delivery.eventType,
          body,
          sequence: delivery.sequence,
          attempt: attemptNo,
          secrets: signingSecrets(destination, startedAt),
          headers,
          timeoutMs: destination.timeoutMs,
          ...(destination.tls === null ? {} : { tls: receiverTls(destination.tls) }),
          trusted: isSystemDestination(destination),
        },
        Math.floor(startedAt / 1_000),
        (at) => pace.written(onClock(at)),
      );
    } finally {
      // When the attempt ended where it was made (a delivery thread: docs/adr/0011), not when
      // this thread got round to its report; never before its start.
      const now = clock();
      finishedAt =
        report?.endedAt === undefined ? now : Math.max(startedAt, Math.min(now, onClock(report.endedAt)));
      // The request went out: its outcome must be recorded whatever the pace state does. An
      // entry left unfinished expires by itself (it only over-counts meanwhile). Adaptive
      // pacing hears the outcome in the same step.
      const feedback = adaptiveFeedback(destination, report?.result, startedAt, finishedAt);
      await pace.finished(finishedAt, feedback).catch(() => undefined);
    }
    const { result } = report;
    // The receiver refused the token it was sent: the next attempt gets a new one.
    if (token !== undefined && auth?.type === 'oauth2_client_credentials' && result.kind === 'response')
      if (result.statusCode === 401)
        await this.deps.tokens?.rejected(destination.id, auth, token).catch(() => undefined);
    return this.complete(delivery, destination, attemptNo, startedAt, finishedAt, report);
  }

  /**
   * An attempt that sent nothing: no token for an OAuth2 credential (`auth_failed` with the
   * token endpoint's answer, retried with the destination's backoff), or a transform that
   * failed or cancelled the delivery. It was never started, so it leaves its place among the
   * destination's queued deliveries.
   */
  private async unsent(
    delivery: ClaimedDelivery,
    destination: Destination,
    error: { code: string; message: string },
    rerun: boolean,
    ends: Unsent,
  ): Promise<{ written?: Promise<void> }> {
    const { pacing, clock } = this.deps;
    const startedBefore =
      rerun && (await pacing.startedBefore?.(delivery.destinationId, delivery.id)) === true;
    await pacing.drop(delivery.destinationId, delivery.id);
    const at = clock();
    const attemptNo = delivery.attempts + (startedBefore ? 2 : 1);
    const report = { result: { kind: 'error', ...error } as const, responseExcerpt: null };
    return this.complete(delivery, destination, attemptNo, at, at, report, ends);
  }

  /** The attempt's outcome decided, counted and buffered for the batched write. */
  private complete(
    delivery: ClaimedDelivery,
    destination: Destination,
    attemptNo: number,
    startedAt: number,
    finishedAt: number,
    report: AttemptReport,
    ends: Unsent = 'retry',
  ): { written?: Promise<void> } {
    const { metrics, completions, random } = this.deps;
    const attemptsMade = attemptNo - delivery.attemptBase;
    const { result } = report;
    const outcome =
      ends === 'retry'
        ? decideOutcome(result, attemptsMade, destination.retry, finishedAt, random)
        : ({ transition: ends, nextAttemptAt: null, disableDestination: false } as const);
    metrics.attemptDuration.observe(
      {
        result:
          result.kind === 'response'
            ? `${Math.floor(result.statusCode / 100)}xx`
            : result.code === PROXY_FAILED
              ? 'proxy_error'
              : result.code === AUTH_FAILED
                ? 'auth_error'
                : result.code === TRANSFORM_FAILED || result.code === TRANSFORM_CANCELLED
                  ? 'transform'
                  : 'error',
      },
      (finishedAt - startedAt) / 1_000,
    );
    if (outcome.transition === 'succeed')
      metrics.deliveryLatency.observe((finishedAt - delivery.eventCreatedAt) / 1_000);
    const written = completions.add({
      destination,
      outcome,
      completed: {
        attempt: {
          id: newId('att'),
          deliveryId: delivery.id,
          destinationId: delivery.destinationId,
          attempt: attemptNo,
          startedAt,
          finishedAt,
          statusCode: result.kind === 'response' ? result.statusCode : null,
          errorCode: result.kind === 'error' ? result.code : null,
          errorMessage: result.kind === 'error' ? result.message : null,
          responseExcerpt: report.responseExcerpt,
        },
        // The store holds a claimed delivery as queued (neither shape writes `delivering`).
        status: transition('queued', outcome.transition),
        nextAttemptAt: outcome.nextAttemptAt,
        disableDestination: outcome.disableDestination,
        probe: delivery.probe === true,
        // If the store holds this attempt (its destination degraded: docs/adr/0007), when
        // an exhausted delivery is tried again instead of dying.
        holdAt:
          ends !== 'retry'
            ? null
            : (outcome.nextAttemptAt ?? finishedAt + retryDelayMs(destination.retry, attemptsMade, random)),
        // A dead one is told to the tenant (`sluice.delivery.dead`, in the batch's transaction).
        event: { id: delivery.eventId, type: delivery.eventType, tenantId: destination.tenantId },
      },
    });
    return { written };
  }
}
