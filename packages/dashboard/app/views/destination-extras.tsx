/**
 * Two things on a destination's page: the note beside its health when every recent delivery
 * failed with a 4xx (the breaker counts only outages, so such an endpoint stays "healthy"
 * while nothing arrives), and sending a test event (`POST /v1/destinations/:id/test`: the
 * catalog's example of the chosen type, through the rate limiter like any event).
 */

import { useState } from 'preact/hooks';
import { api, type Delivery, type HealthState } from '../api.ts';
import { usePoll } from '../use-poll.ts';
import { useCatalog } from './event-types-picker.tsx';
import { HealthBadge } from './health.tsx';

/** Every recent delivery that was attempted failed with a 4xx: the status codes seen, or null. */
function all4xx(deliveries: readonly Delivery[]): string[] | null {
  const tried = deliveries.filter((d) => d.attemptCount > 0 && d.status !== 'cancelled');
  if (tried.length === 0) return null;
  const codes = new Set<string>();
  for (const d of tried) {
    const code = /^http_(4\d\d)$/.exec(d.lastError ?? '')?.[1];
    if (d.status === 'delivered' || code === undefined) return null;
    codes.add(code);
  }
  return [...codes].sort();
}

/** The health badge, always shown, with the 4xx note beside it when it applies. */
export function HealthWithNote({ id, state }: { id: string; state: HealthState }) {
  const { data } = usePoll(() => api.deliveries({ destinationId: id, limit: 20 }), 3_000, [id]);
  const codes = data ? all4xx(data.data) : null;
  return (
    <span class="health-note">
      <HealthBadge state={state} always />
      {codes && (
        <span
          class="note-4xx"
          data-testid="note-4xx"
          title="4xx answers are the receiver's refusals, not outages: the circuit breaker stays closed, and the deliveries die once their attempts run out"
        >
          · all recent deliveries failed with 4xx ({codes.join(', ')})
        </span>
      )}
    </span>
  );
}

export function TestEvent({ id }: { id: string }) {
  const { types } = useCatalog();
  const [type, setType] = useState('sluice.test');
  const [result, setResult] = useState<{ ok: boolean; text: string; eventId?: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const choices = types.some((t) => t.name === 'sluice.test') ? types : [{ name: 'sluice.test' }, ...types];

  const send = async (e: SubmitEvent) => {
    e.preventDefault();
    setBusy(true);
    setResult(null);
    try {
      const sent = await api.test(id, { type });
      setResult({
        ok: true,
        eventId: sent.id,
        text: `Test event ${sent.id} sent (${type}): it goes through the rate limiter like any event.`,
      });
    } catch (err) {
      setResult({ ok: false, text: `Not sent: ${err instanceof Error ? err.message : err}` });
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="test-event" onSubmit={send}>
      <label>
        Test event type
        <select name="testType" value={type} onChange={(e) => setType(e.currentTarget.value)}>
          {choices.map((t) => (
            <option key={t.name} value={t.name}>
              {t.name}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" disabled={busy}>
        Send test event
      </button>
      {result && (
        <p class={result.ok ? 'notice' : 'error'} role="status">
          {result.text} {result.eventId && <a href={`#/events/${result.eventId}`}>Open it</a>}
        </p>
      )}
    </form>
  );
}
