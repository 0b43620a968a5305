/**
 * A destination's settings other than its pacing: name, URL, the event types it gets (from
 * the catalog), its retry policy and one attempt's timeout, saved with one `PATCH` (a new URL
 * also closes an open circuit); and its deletion, confirmed first (`DELETE`: its undelivered
 * deliveries are cancelled, never sent).
 */

import { useContext, useState } from 'preact/hooks';
import { CanCreate } from '../access.ts';
import { api, type Destination } from '../api.ts';
import { EventTypesPicker } from './event-types-picker.tsx';
import { SaveOutcome, useSave } from './save-state.tsx';

interface Values {
  name: string;
  url: string;
  eventTypes: string[];
  maxAttempts: string;
  initialDelayMs: string;
  maxDelayMs: string;
  timeoutMs: string;
}

const valuesOf = (d: Destination): Values => ({
  name: d.name ?? '',
  url: d.url,
  eventTypes: d.eventTypes,
  maxAttempts: String(d.retry.maxAttempts),
  initialDelayMs: String(d.retry.initialDelayMs),
  maxDelayMs: String(d.retry.maxDelayMs),
  timeoutMs: String(d.timeoutMs),
});

export function EditDestination({
  destination,
  onSaved,
  canWrite = true,
}: {
  destination: Destination;
  onSaved(d: Destination): void;
  canWrite?: boolean;
}) {
  // A portal link narrowed to some destinations may not choose event types (the API refuses:
  // `*` or `sluice.*` would bring it the others' events); it is the one that may not create.
  const chooseTypes = useContext(CanCreate);
  const [v, setV] = useState<Values>(() => valuesOf(destination));
  const set = <K extends keyof Values>(key: K, value: Values[K]) => setV({ ...v, [key]: value });

  const { busy, error, saved, submit } = useSave(async () => {
    const updated = await api.update(destination.id, {
      name: v.name.trim() === '' ? null : v.name.trim(),
      url: v.url.trim(),
      ...(chooseTypes ? { eventTypes: v.eventTypes.length === 0 ? ['*'] : v.eventTypes } : {}),
      retry: {
        maxAttempts: Number(v.maxAttempts),
        initialDelayMs: Number(v.initialDelayMs),
        maxDelayMs: Number(v.maxDelayMs),
      },
      timeoutMs: Number(v.timeoutMs),
    });
    onSaved(updated);
    setV(valuesOf(updated));
  });

  const number = (key: keyof Values, label: string, min: number, max: number, hint?: string) => (
    <label>
      {label}
      <input
        name={key}
        type="number"
        min={min}
        max={max}
        step={1}
        required
        disabled={!canWrite}
        value={v[key] as string}
        onInput={(e) => set(key, e.currentTarget.value)}
      />
      {hint && <span class="hint">{hint}</span>}
    </label>
  );

  return (
    <form class="edit-form" onSubmit={submit} aria-labelledby="settings-title">
      <h2 id="settings-title">Endpoint, events and retries</h2>
      <div class="edit-grid">
        <div class="edit-col">
          <label>
            Name
            <input
              name="name"
              value={v.name}
              disabled={!canWrite}
              onInput={(e) => set('name', e.currentTarget.value)}
            />
          </label>
          <label>
            URL
            <input
              name="url"
              type="url"
              required
              disabled={!canWrite}
              value={v.url}
              onInput={(e) => set('url', e.currentTarget.value)}
            />
          </label>
          <fieldset>
            <legend>Retries</legend>
            {number('maxAttempts', 'Attempts at most', 1, 50)}
            {number('initialDelayMs', 'First retry after (ms)', 0, 86_400_000)}
            {number('maxDelayMs', 'Longest wait between attempts (ms)', 0, 86_400_000)}
          </fieldset>
          {number('timeoutMs', 'Timeout of one attempt (ms)', 100, 120_000, '100–120,000 ms')}
        </div>
        <EventTypesPicker
          value={v.eventTypes}
          onChange={(types) => set('eventTypes', types)}
          disabled={!canWrite || !chooseTypes}
          idPrefix={`edit-${destination.id}`}
        />
      </div>
      <SaveOutcome error={error} saved={saved} />
      {canWrite && (
        <button type="submit" class="save" disabled={busy}>
          {busy ? 'Saving…' : 'Save settings'}
        </button>
      )}
    </form>
  );
}

/** Delete, after a second click that says what goes with it. */
export function DeleteDestination({
  destination,
  onDeleted,
}: {
  destination: Destination;
  onDeleted(): void;
}) {
  const [asking, setAsking] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const label = destination.name ?? destination.id;
  if (!asking)
    return (
      <button type="button" class="danger" onClick={() => setAsking(true)}>
        Delete destination…
      </button>
    );
  return (
    <div class="confirm">
      <p id="delete-question">
        Delete <strong>{label}</strong>? Its undelivered deliveries are cancelled, never sent. This cannot be
        undone.
      </p>
      <div class="actions">
        <button
          type="button"
          class="danger"
          onClick={async () => {
            try {
              await api.remove(destination.id);
              onDeleted();
            } catch (err) {
              setError(err instanceof Error ? err.message : String(err));
            }
          }}
        >
          Delete {label}
        </button>
        <button type="button" class="secondary" autofocus onClick={() => setAsking(false)}>
          Keep it
        </button>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
