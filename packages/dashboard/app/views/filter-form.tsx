/**
 * What a destination gets of its event types (docs/api.md "Filters"): its `filter`, a query
 * document over `{ type, payload }`, edited as JSON text and saved with one `PATCH` (empty:
 * none). The API checks it and says what is wrong (an unknown operator, a bad regular
 * expression); the page shows its words, and the preview beside it tries the filter as it is
 * in the box. The same form serves the portal.
 */

import { useState } from 'preact/hooks';
import { api, type Destination } from '../api.ts';
import { PreviewBox } from './preview-box.tsx';
import { SaveOutcome, useSave } from './save-state.tsx';

const textOf = (d: Destination) => (d.filter === null ? '' : JSON.stringify(d.filter, null, 2));

export function FilterForm({
  destination,
  onSaved,
  canWrite = true,
}: {
  destination: Destination;
  onSaved(d: Destination): void;
  canWrite?: boolean;
}) {
  const [text, setText] = useState(() => textOf(destination));

  const filterOf = (): Record<string, unknown> | null => {
    if (text.trim() === '') return null;
    try {
      return JSON.parse(text) as Record<string, unknown>;
    } catch (err) {
      throw new Error(`filter: not JSON (${err instanceof Error ? err.message : String(err)})`);
    }
  };

  const { busy, error, saved, submit } = useSave(async () => {
    const filter = filterOf();
    const updated = await api.update(destination.id, { filter });
    onSaved(updated);
    setText(textOf(updated));
  });

  return (
    <form class="filter-form" onSubmit={submit} aria-labelledby="filter-title">
      <h2 id="filter-title">Which events it gets</h2>
      <label>
        Filter
        <textarea
          name="filter"
          rows={4}
          disabled={!canWrite}
          placeholder={'{ "payload.amount": { "$gte": 100 } }'}
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
        />
      </label>
      <span class="hint">
        A MongoDB-style query over the event's type and payload; an event of its types that does not match is
        not sent to it. Empty: every event of its types.
      </span>
      <SaveOutcome error={error} saved={saved} />
      {canWrite && (
        <button type="submit" class="save" disabled={busy}>
          {busy ? 'Saving…' : 'Save filter'}
        </button>
      )}
      <PreviewBox destination={destination} tried={() => ({ filter: filterOf() })} />
    </form>
  );
}
