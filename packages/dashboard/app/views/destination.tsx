/**
 * One destination: the live compliance chart (polled every second), its backlog, the limit
 * form (in force within one tick: the next poll draws the new line), pause/resume, the secret
 * (rotate, show), a test event, its endpoint health (the circuit breaker) with its transitions
 * and the 4xx note, its URL, event types, retries and timeout, its deletion, and its recent
 * deliveries with their attempts. Without write access (a `read` portal link) it only shows.
 */

import { useContext, useEffect, useRef, useState } from 'preact/hooks';
import { CanWrite } from '../access.ts';
import { api, type Destination, type RateLimit, type Stats } from '../api.ts';
import { formatAge, formatRate, isBackingUp, perSecond } from '../format.ts';
import { usePoll } from '../use-poll.ts';
import { type ChartData, RateChart } from './chart.tsx';
import { ConfirmButton } from './confirm-button.tsx';
import { Deliveries } from './deliveries.tsx';
import { DeleteDestination, EditDestination } from './destination-edit.tsx';
import { HealthWithNote, TestEvent } from './destination-extras.tsx';
import { FilterForm } from './filter-form.tsx';
import { HealthPanel } from './health.tsx';
import { LimitForm } from './limit-form.tsx';
import { ReceiverAccess } from './receiver-access.tsx';
import { TransformForm } from './transform-form.tsx';

const SPAN_SECONDS = 180;

/** The effective limit (adaptive pacing) per second, as this page polled it. */
type EffectiveHistory = { at: number; perSecond: number }[];

/**
 * The limit in force at each second, from the stats' `limitChanges` (the API records each
 * change): before a change its `from`, after the last the limit now. A limit set during a
 * second is drawn from that second on, so the line shows a change at once.
 */
function limitAt(stats: Pick<Stats, 'rateLimit' | 'limitChanges'>, seconds: number): RateLimit {
  let value = stats.rateLimit;
  for (let i = stats.limitChanges.length - 1; i >= 0; i--) {
    const change = stats.limitChanges[i];
    if (change === undefined || Date.parse(change.at) < (seconds + 1) * 1_000) break;
    value = change.from;
  }
  return value;
}

function chartData(stats: Stats, effective: EffectiveHistory): ChartData {
  const t = stats.perSecond.map((p) => Date.parse(p.t) / 1_000);
  const effectiveAt = (seconds: number) => {
    let value: number | null = null;
    for (const step of effective) if (step.at < (seconds + 1) * 1_000) value = step.perSecond;
    return value;
  };
  return {
    t,
    sent: stats.perSecond.map((p) => p.sent),
    limit: t.map((seconds) => perSecond(limitAt(stats, seconds))),
    effective: t.map(effectiveAt),
  };
}

/**
 * Keyed by its id: a notice ("Limit set to …"), a shown secret and the chart's history belong
 * to the destination they were about, so moving straight to another starts its page afresh.
 */
export function DestinationDetail({ id }: { id: string }) {
  return <DestinationPage key={id} id={id} />;
}

function DestinationPage({ id }: { id: string }) {
  const canWrite = useContext(CanWrite);
  const [destination, setDestination] = useState<Destination | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [secret, setSecret] = useState<{ label: string; value: string } | null>(null);
  const effective = useRef<EffectiveHistory>([]);
  const {
    data: stats,
    error,
    refresh: refreshStats,
  } = usePoll(() => api.stats(id, SPAN_SECONDS), 1_000, [id]);

  useEffect(() => {
    void api.destination(id).then(setDestination, (err: Error) => setNotice(`${err.message}: ${id}`));
  }, [id]);

  if (stats) {
    const planned = perSecond({ ...stats.rateLimit, limit: stats.effectiveLimit });
    if (effective.current[effective.current.length - 1]?.perSecond !== planned) {
      effective.current.push({ at: Date.now(), perSecond: planned });
    }
  }

  const act = async (what: string, run: () => Promise<Destination | undefined>) => {
    setNotice(null);
    try {
      const updated = await run();
      if (updated) setDestination(updated);
      setNotice(what);
    } catch (err) {
      setNotice(`Failed: ${err instanceof Error ? err.message : err}`);
    }
  };

  if (!destination) {
    return <p class={notice ? 'error' : 'loading'}>{notice ?? 'Loading…'}</p>;
  }
  const state = stats?.state ?? destination.state;
  const rate = stats?.rateLimit ?? destination.rateLimit;
  // The audit spans the chart: judge it against the highest cap in force over the span (a
  // window of one period may hold the burst, where one is set).
  const cap = rate.burst ?? rate.limit;
  const caps = (stats?.limitChanges ?? []).map((c) => c.from.burst ?? c.from.limit);
  const highest = Math.max(cap, ...caps);
  const broken = stats !== null && stats.maxSentInAnyWindow > highest;

  return (
    <section aria-labelledby="destination-title">
      <p class="crumbs">
        <a href="#/">Destinations</a> ›
      </p>
      <div class="title-row">
        <h1 id="destination-title">{destination.name ?? destination.id}</h1>
        <span class={`state state-${state}`}>{state}</span>
        <HealthWithNote id={id} state={destination.health.state} />
        {stats && isBackingUp(stats, rate) && <span class="mark mark-backing-up">Backing up</span>}
      </div>
      <p class="muted">
        <code>{destination.id}</code> · {destination.url}
        {destination.disabledReason && ` · disabled: ${destination.disabledReason}`}
      </p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}

      <div class="detail-grid">
        <div class="panel">
          <h2>Requests started per second, last {SPAN_SECONDS / 60} minutes</h2>
          {stats && (
            <RateChart
              data={chartData(stats, effective.current)}
              adaptive={destination.adaptive}
              label={`Requests started per second against the limit of ${formatRate(rate)}`}
            />
          )}
          <dl class="figures" aria-live="off">
            <div>
              <dt>Limit</dt>
              <dd data-testid="current-limit">
                {formatRate(rate)}
                {rate.burst !== undefined && <span class="muted"> · bursts of {rate.burst}</span>}
              </dd>
            </div>
            {destination.adaptive && (
              <div>
                <dt>Effective limit (adaptive)</dt>
                <dd data-testid="effective-limit" class={stats?.backingOff ? 'bad' : ''}>
                  {stats ? `${stats.effectiveLimit} / ${rate.period}` : '—'}
                  {stats?.backingOff && <span class="muted"> · backing off</span>}
                </dd>
              </div>
            )}
            {stats?.bucketRefusals != null && (
              <div>
                <dt>Over the bucket ({SPAN_SECONDS / 60} min)</dt>
                <dd data-testid="bucket-refusals" class={stats.bucketRefusals > 0 ? 'bad' : ''}>
                  {stats.bucketRefusals}
                </dd>
              </div>
            )}
            <div>
              <dt>Order</dt>
              <dd data-testid="ordering">
                {destination.ordering === 'fifo' ? 'FIFO, one at a time' : 'none'}
              </dd>
            </div>
            <div>
              <dt>
                Most in any {rate.period} ({SPAN_SECONDS / 60} min)
              </dt>
              <dd data-testid="max-window" class={broken ? 'bad' : ''}>
                {stats?.maxSentInAnyWindow ?? '—'}
                <span class="muted"> / {highest === cap ? cap : `${highest}, now ${cap}`}</span>
              </dd>
            </div>
            <div>
              <dt>Pending</dt>
              <dd data-testid="pending">{stats?.pending ?? '—'}</dd>
            </div>
            <div>
              <dt>Queued</dt>
              <dd>{stats?.queued ?? '—'}</dd>
            </div>
            <div>
              <dt>In flight</dt>
              <dd>{stats?.inFlight ?? '—'}</dd>
            </div>
            <div>
              <dt>Oldest pending</dt>
              <dd>{formatAge(stats?.oldestPendingAgeMs ?? 0)}</dd>
            </div>
            <div>
              <dt>Delivered ({SPAN_SECONDS / 60} min)</dt>
              <dd data-testid="delivered">{stats?.delivered ?? '—'}</dd>
            </div>
            <div>
              <dt>Dead ({SPAN_SECONDS / 60} min)</dt>
              <dd class={stats && stats.dead > 0 ? 'bad' : ''}>{stats?.dead ?? '—'}</dd>
            </div>
          </dl>
        </div>

        <div class="panel side">
          <h2>Rate limit</h2>
          <LimitForm
            key={destination.updatedAt}
            destination={destination}
            canWrite={canWrite}
            onSaved={(updated) => {
              refreshStats();
              setDestination(updated);
              setNotice(`Limit set to ${formatRate(updated.rateLimit)}: in force within one tick.`);
            }}
          />
          {canWrite && <h2>Actions</h2>}
          <div class="actions" hidden={!canWrite}>
            {state === 'active' ? (
              <button type="button" onClick={() => act('Paused.', () => api.pause(id))}>
                Pause
              </button>
            ) : (
              <button type="button" onClick={() => act('Resumed.', () => api.resume(id))}>
                Resume
              </button>
            )}
            <ConfirmButton
              label="Rotate secret"
              question="Rotate the signing secret? The old one keeps signing beside it for 24 h."
              yes="Rotate now"
              onConfirm={() =>
                act('Secret rotated.', async () => {
                  const rotated = await api.rotateSecret(id);
                  setSecret({
                    label: 'New signing secret (the old one signs for 24 h more)',
                    value: rotated.secret,
                  });
                  return undefined;
                })
              }
            />
            <button
              type="button"
              onClick={() =>
                act('Secret shown.', async () => {
                  const shown = await api.secret(id);
                  setSecret({ label: 'Signing secret', value: shown.secret });
                  return undefined;
                })
              }
            >
              Show secret
            </button>
          </div>
          {canWrite && <TestEvent id={id} />}
          {secret && (
            <div class="secret">
              <label for="new-secret">{secret.label}</label>
              <input
                id="new-secret"
                readOnly
                value={secret.value}
                onFocus={(e) => e.currentTarget.select()}
              />
            </div>
          )}
          {notice && (
            <p class="notice" role="status">
              {notice}
            </p>
          )}
        </div>
      </div>

      <HealthPanel id={id} />

      <div class="panel">
        <EditDestination destination={destination} canWrite={canWrite} onSaved={setDestination} />
        <ReceiverAccess destination={destination} canWrite={canWrite} onSaved={setDestination} />
        <FilterForm destination={destination} canWrite={canWrite} onSaved={setDestination} />
        <TransformForm destination={destination} canWrite={canWrite} onSaved={setDestination} />
        {canWrite && (
          <DeleteDestination
            destination={destination}
            onDeleted={() => {
              location.hash = '#/';
            }}
          />
        )}
      </div>

      <Deliveries destinationId={id} url={destination.url} />
    </section>
  );
}
