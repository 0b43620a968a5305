/**
 * One destination: the live compliance chart (polled every second), its backlog, the limit
 * form (in force within one tick: the next poll draws the new line), pause/resume, the secret
 * (rotate, show), its endpoint health (the circuit breaker) with its transitions, and its recent
 * deliveries with their attempts.
 */

import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type Destination, type Stats } from '../api.ts';
import { formatAge, formatRate, isBackingUp, perSecond } from '../format.ts';
import { usePoll } from '../use-poll.ts';
import { type ChartData, RateChart } from './chart.tsx';
import { Deliveries } from './deliveries.tsx';
import { HealthBadge, HealthPanel } from './health.tsx';
import { LimitForm } from './limit-form.tsx';

const SPAN_SECONDS = 180;

/** The limit in force at each moment, as this page saw it: a step per change (`limit`: the
 * most a window of one period may hold, the burst where one is set). */
type LimitHistory = { at: number; perSecond: number; limit: number }[];

/** The effective limit (adaptive pacing) per second, as this page polled it. */
type EffectiveHistory = { at: number; perSecond: number }[];

function chartData(stats: Stats, history: LimitHistory, effective: EffectiveHistory): ChartData {
  const t = stats.perSecond.map((p) => Date.parse(p.t) / 1_000);
  const limitAt = (seconds: number) => {
    let value = history[0]?.perSecond ?? perSecond(stats.rateLimit);
    // A limit set during a second is drawn from that second on: the line shows a change at once.
    for (const step of history) if (step.at < (seconds + 1) * 1_000) value = step.perSecond;
    return value;
  };
  const effectiveAt = (seconds: number) => {
    let value: number | null = null;
    for (const step of effective) if (step.at < (seconds + 1) * 1_000) value = step.perSecond;
    return value;
  };
  return {
    t,
    sent: stats.perSecond.map((p) => p.sent),
    limit: t.map(limitAt),
    effective: t.map(effectiveAt),
  };
}

export function DestinationDetail({ id }: { id: string }) {
  const [destination, setDestination] = useState<Destination | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [secret, setSecret] = useState<{ label: string; value: string } | null>(null);
  const history = useRef<LimitHistory>([]);
  const effective = useRef<EffectiveHistory>([]);
  const { data: stats, error } = usePoll(() => api.stats(id, SPAN_SECONDS), 1_000, [id]);

  useEffect(() => {
    history.current = [];
    effective.current = [];
    void api.destination(id).then(setDestination, (err: Error) => setNotice(`${err.message}: ${id}`));
  }, [id]);

  if (stats) {
    const value = perSecond(stats.rateLimit);
    const last = history.current[history.current.length - 1];
    if (last?.perSecond !== value) {
      history.current.push({
        at: Date.now(),
        perSecond: value,
        limit: stats.rateLimit.burst ?? stats.rateLimit.limit,
      });
    }
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
  const highest = Math.max(cap, ...history.current.map((h) => h.limit));
  const broken = stats !== null && stats.maxSentInAnyWindow > highest;

  return (
    <section aria-labelledby="destination-title">
      <p class="crumbs">
        <a href="#/">Destinations</a> ›
      </p>
      <div class="title-row">
        <h1 id="destination-title">{destination.name ?? destination.id}</h1>
        <span class={`state state-${state}`}>{state}</span>
        <HealthBadge state={destination.health.state} />
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
              data={chartData(stats, history.current, effective.current)}
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
            onSaved={(updated) => {
              history.current.push({
                at: Date.now(),
                perSecond: perSecond(updated.rateLimit),
                limit: updated.rateLimit.burst ?? updated.rateLimit.limit,
              });
              setDestination(updated);
              setNotice(`Limit set to ${formatRate(updated.rateLimit)}: in force within one tick.`);
            }}
          />
          <h2>Actions</h2>
          <div class="actions">
            {state === 'active' ? (
              <button type="button" onClick={() => act('Paused.', () => api.pause(id))}>
                Pause
              </button>
            ) : (
              <button type="button" onClick={() => act('Resumed.', () => api.resume(id))}>
                Resume
              </button>
            )}
            <button
              type="button"
              onClick={() => {
                if (!confirm('Rotate the signing secret? The old one keeps signing beside it for 24 h.'))
                  return;
                void act('Secret rotated.', async () => {
                  const rotated = await api.rotateSecret(id);
                  setSecret({
                    label: 'New signing secret (the old one signs for 24 h more)',
                    value: rotated.secret,
                  });
                  return undefined;
                });
              }}
            >
              Rotate secret
            </button>
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

      <Deliveries destinationId={id} />
    </section>
  );
}
