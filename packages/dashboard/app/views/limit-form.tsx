import { useState } from 'preact/hooks';
import { api, type Destination, type Ordering, type Period } from '../api.ts';

/**
 * Limit, period, burst, concurrency, order and adaptive pacing; saved with one PATCH, in force
 * within one tick. The burst is sent with the limit (a rate limit without one drops it).
 */
export function LimitForm({
  destination,
  onSaved,
}: {
  destination: Destination;
  onSaved(d: Destination): void;
}) {
  const [limit, setLimit] = useState(String(destination.rateLimit.limit));
  const [period, setPeriod] = useState<Period>(destination.rateLimit.period);
  const [burst, setBurst] = useState(
    destination.rateLimit.burst === undefined ? '' : String(destination.rateLimit.burst),
  );
  const [adaptive, setAdaptive] = useState(destination.adaptive);
  const [concurrency, setConcurrency] = useState(
    destination.maxConcurrency === null ? '' : String(destination.maxConcurrency),
  );
  const [ordering, setOrdering] = useState<Ordering>(destination.ordering);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: SubmitEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const updated = await api.update(destination.id, {
        rateLimit: {
          limit: Number(limit),
          period,
          ...(burst.trim() === '' ? {} : { burst: Number(burst) }),
        },
        adaptive,
        maxConcurrency: concurrency.trim() === '' ? null : Number(concurrency),
        ordering,
      });
      onSaved(updated);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="limit-form" onSubmit={submit} aria-describedby={error ? 'limit-error' : undefined}>
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
            value={limit}
            onInput={(e) => setLimit(e.currentTarget.value)}
          />
        </label>
        <label>
          Per
          <select name="period" value={period} onChange={(e) => setPeriod(e.currentTarget.value as Period)}>
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
          value={burst}
          onInput={(e) => setBurst(e.currentTarget.value)}
        />
      </label>
      <label class="inline">
        <input
          name="adaptive"
          type="checkbox"
          checked={adaptive}
          onChange={(e) => setAdaptive(e.currentTarget.checked)}
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
          value={concurrency}
          onInput={(e) => setConcurrency(e.currentTarget.value)}
        />
      </label>
      <label>
        Order
        <select
          name="ordering"
          value={ordering}
          onChange={(e) => setOrdering(e.currentTarget.value as Ordering)}
        >
          <option value="none">none</option>
          <option value="fifo">FIFO (one request at a time)</option>
        </select>
      </label>
      {error && (
        <p id="limit-error" class="error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" disabled={busy}>
        {busy ? 'Saving…' : 'Apply limit'}
      </button>
    </form>
  );
}
