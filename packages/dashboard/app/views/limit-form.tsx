import { useState } from 'preact/hooks';
import { api, type Destination } from '../api.ts';
import { PacingFields, type PacingValues, pacingSettings, pacingValues } from './pacing-fields.tsx';

/**
 * Limit, period, burst, concurrency, order and adaptive pacing; saved with one PATCH, in force
 * within one tick. The burst is sent with the limit (a rate limit without one drops it).
 */
export function LimitForm({
  destination,
  onSaved,
  canWrite = true,
}: {
  destination: Destination;
  onSaved(d: Destination): void;
  canWrite?: boolean;
}) {
  const [pacing, setPacing] = useState<PacingValues>(() => pacingValues(destination));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: SubmitEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const updated = await api.update(destination.id, pacingSettings(pacing));
      onSaved(updated);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="limit-form" onSubmit={submit} aria-describedby={error ? 'limit-error' : undefined}>
      <fieldset disabled={!canWrite} class="bare">
        <PacingFields value={pacing} onChange={setPacing} />
      </fieldset>
      {error && (
        <p id="limit-error" class="error" role="alert">
          {error}
        </p>
      )}
      {canWrite && (
        <button type="submit" disabled={busy}>
          {busy ? 'Saving…' : 'Apply limit'}
        </button>
      )}
    </form>
  );
}
