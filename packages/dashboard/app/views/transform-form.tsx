/**
 * What a destination sends (docs/api.md "Transforms"): its `transform`, JavaScript defining
 * `handler(webhook)`, edited as text and saved with one `PATCH` (empty: none), with the
 * preview beside it trying the code as it is in the box. The API compiles it and says what
 * is wrong, with the line; the page shows its words. The same form serves the portal.
 */

import { useState } from 'preact/hooks';
import { api, type Destination } from '../api.ts';
import { PreviewBox } from './preview-box.tsx';
import { SaveOutcome, useSave } from './save-state.tsx';

const EXAMPLE =
  'function handler(webhook) {\n  return { payload: { text: webhook.type }, headers: webhook.headers };\n}';
const textOf = (d: Destination) => d.transform?.code ?? '';
const transformOf = (text: string) => (text.trim() === '' ? null : { code: text });

export function TransformForm({
  destination,
  onSaved,
  canWrite = true,
}: {
  destination: Destination;
  onSaved(d: Destination): void;
  canWrite?: boolean;
}) {
  const [text, setText] = useState(() => textOf(destination));

  const { busy, error, saved, submit } = useSave(async () => {
    const updated = await api.update(destination.id, { transform: transformOf(text) });
    onSaved(updated);
    setText(textOf(updated));
  });

  return (
    <form class="transform-form" onSubmit={submit} aria-labelledby="transform-title">
      <h2 id="transform-title">What it sends</h2>
      <label>
        Transform
        <textarea
          name="transform"
          rows={6}
          disabled={!canWrite}
          placeholder={EXAMPLE}
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
        />
      </label>
      <span class="hint">
        JavaScript run at each attempt in a sandbox: handler(webhook) receives {'{ type, payload, headers }'}{' '}
        and returns {'{ payload, headers }'} or {'{ cancel: true }'}. Empty: what was posted is sent.
      </span>
      <SaveOutcome error={error} saved={saved} />
      {canWrite && (
        <button type="submit" class="save" disabled={busy}>
          {busy ? 'Saving…' : 'Save transform'}
        </button>
      )}
      <PreviewBox destination={destination} tried={() => ({ transform: transformOf(text) })} />
    </form>
  );
}
