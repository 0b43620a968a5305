/**
 * What a settings form of a destination's page shares: one save at a time (`busy`), the API's
 * error in words, and "Saved at …" once the `PATCH` answered; `SaveOutcome` shows the last two.
 */

import { useState } from 'preact/hooks';

export function useSave(save: () => Promise<void>) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState<string | null>(null);
  const submit = async (e: SubmitEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setSaved(null);
    try {
      await save();
      setSaved(`Saved at ${new Date().toLocaleTimeString(undefined, { hour12: false })}.`);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, saved, submit };
}

export function SaveOutcome({ error, saved }: { error: string | null; saved: string | null }) {
  return (
    <>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {saved && (
        <p class="notice" role="status">
          {saved}
        </p>
      )}
    </>
  );
}
