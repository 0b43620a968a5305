/**
 * What a destination would send for an event (`POST /v1/destinations/:id/preview`, docs/api.md
 * "Preview"), beside the filter or transform being edited: the event's type and payload are
 * typed here, and the field's unsaved value is tried instead of the saved one. Nothing is sent.
 */

import { useState } from 'preact/hooks';
import { api, type Destination, type Preview } from '../api.ts';

export function PreviewBox({
  destination,
  tried,
}: {
  destination: Destination;
  /** The field's value as edited, to try instead of the saved one (it throws on text that is not valid). */
  tried(): { filter?: Record<string, unknown> | null; transform?: { code: string } | null };
}) {
  const [type, setType] = useState(
    () => destination.eventTypes.find((t) => !t.includes('*')) ?? 'order.paid',
  );
  const [payload, setPayload] = useState('{ "amount": 120 }');
  const [busy, setBusy] = useState(false);
  const [shown, setShown] = useState<Preview | null>(null);
  const [error, setError] = useState<string | null>(null);

  const run = async () => {
    setBusy(true);
    setError(null);
    setShown(null);
    try {
      let parsed: unknown;
      try {
        parsed = JSON.parse(payload);
      } catch (err) {
        throw new Error(`payload: not JSON (${err instanceof Error ? err.message : String(err)})`);
      }
      setShown(await api.preview(destination.id, { type, payload: parsed, ...tried() }));
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <fieldset class="preview-box" aria-label="Preview">
      <label>
        Event type
        <input name="preview-type" value={type} onInput={(e) => setType(e.currentTarget.value)} />
      </label>
      <label>
        Payload
        <textarea
          name="preview-payload"
          rows={3}
          value={payload}
          onInput={(e) => setPayload(e.currentTarget.value)}
        />
      </label>
      <button type="button" disabled={busy} onClick={() => void run()}>
        {busy ? 'Previewing…' : 'Preview'}
      </button>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {shown && <PreviewOutcome preview={shown} />}
    </fieldset>
  );
}

function PreviewOutcome({ preview }: { preview: Preview }) {
  if (!preview.matches)
    return <p role="status">Not sent: the event is not of its types, or its filter leaves it out.</p>;
  if (preview.error !== null)
    return (
      <p role="status" class={preview.error.code === 'transform_failed' ? 'error' : undefined}>
        {preview.error.code === 'transform_cancelled'
          ? 'Not sent: the transform cancels it.'
          : `The transform fails: ${preview.error.message}`}
      </p>
    );
  return (
    <pre role="status" aria-label="What would be sent">
      {Object.entries(preview.request?.headers ?? {})
        .map(([name, value]) => `${name}: ${value}`)
        .join('\n')}
      {'\n\n'}
      {JSON.stringify(preview.request?.body, null, 2)}
    </pre>
  );
}
