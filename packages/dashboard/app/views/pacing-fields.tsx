/**
 * The pacing settings of a destination as form inputs — limit, period, burst, adaptive
 * pacing, concurrency, order — shared by the new-destination form and the limit form, with
 * what they send to the API.
 */

import type { Destination, Ordering, Period } from '../api.ts';

/** The inputs' values, as typed (numbers as text: empty means none). */
export interface PacingValues {
  limit: string;
  period: Period;
  burst: string;
  adaptive: boolean;
  concurrency: string;
  ordering: Ordering;
}

/** A destination's settings as input values; without one, a new destination's defaults. */
export function pacingValues(destination?: Destination): PacingValues {
  if (destination === undefined)
    return { limit: '10', period: 'second', burst: '', adaptive: false, concurrency: '', ordering: 'none' };
  const { rateLimit, maxConcurrency } = destination;
  return {
    limit: String(rateLimit.limit),
    period: rateLimit.period,
    burst: rateLimit.burst === undefined ? '' : String(rateLimit.burst),
    adaptive: destination.adaptive,
    concurrency: maxConcurrency === null ? '' : String(maxConcurrency),
    ordering: destination.ordering,
  };
}

/** What the API takes: the burst goes with the limit (a rate limit without one drops it). */
export function pacingSettings(v: PacingValues) {
  return {
    rateLimit: {
      limit: Number(v.limit),
      period: v.period,
      ...(v.burst.trim() === '' ? {} : { burst: Number(v.burst) }),
    },
    adaptive: v.adaptive,
    maxConcurrency: v.concurrency.trim() === '' ? null : Number(v.concurrency),
    ordering: v.ordering,
  };
}

export function PacingFields({ value, onChange }: { value: PacingValues; onChange(v: PacingValues): void }) {
  const set = <K extends keyof PacingValues>(key: K, v: PacingValues[K]) => onChange({ ...value, [key]: v });
  return (
    <>
      <div class="field-row">
        <label>
          Limit
          <input
            name="limit"
            type="number"
            min={1}
            max={1_000_000}
            step={1}
            required
            value={value.limit}
            onInput={(e) => set('limit', e.currentTarget.value)}
          />
        </label>
        <label>
          Per
          <select
            name="period"
            value={value.period}
            onChange={(e) => set('period', e.currentTarget.value as Period)}
          >
            <option value="second">second</option>
            <option value="minute">minute</option>
            <option value="hour">hour</option>
          </select>
        </label>
      </div>
      <label>
        Burst
        <input
          name="burst"
          type="number"
          min={1}
          max={1_000_000}
          step={1}
          placeholder="none"
          value={value.burst}
          onInput={(e) => set('burst', e.currentTarget.value)}
        />
      </label>
      <label class="inline">
        <input
          name="adaptive"
          type="checkbox"
          checked={value.adaptive}
          onChange={(e) => set('adaptive', e.currentTarget.checked)}
        />
        Adaptive pacing (back off when the receiver pushes back)
      </label>
      <label>
        Max concurrency
        <input
          name="maxConcurrency"
          type="number"
          min={1}
          max={10_000}
          step={1}
          placeholder="no cap"
          value={value.concurrency}
          onInput={(e) => set('concurrency', e.currentTarget.value)}
        />
      </label>
      <label>
        Order
        <select
          name="ordering"
          value={value.ordering}
          onChange={(e) => set('ordering', e.currentTarget.value as Ordering)}
        >
          <option value="none">none</option>
          <option value="fifo">FIFO (one request at a time)</option>
        </select>
      </label>
    </>
  );
}
