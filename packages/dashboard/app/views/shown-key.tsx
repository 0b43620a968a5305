/**
 * A tenant's API key as the API answered it once (a new tenant, another key): Sluice keeps
 * only its hash, so this page is the one chance to copy it. A copy button (the clipboard, or
 * selecting the text where the browser refuses it) and a plain note saying so. It takes the
 * focus when shown (the button that made it is gone), its text selected: Ctrl+C copies it.
 */

import { useEffect, useRef, useState } from 'preact/hooks';

async function copy(input: HTMLInputElement | null, value: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(value);
    return true;
  } catch {
    // No clipboard here (an insecure origin, or permission refused): select it for Ctrl+C.
    input?.focus();
    input?.select();
    return false;
  }
}

export function ShownKey({
  id,
  label,
  apiKey,
  onDone,
}: {
  /** The input's id, unique on the page. */
  id: string;
  label: string;
  apiKey: string;
  onDone?: () => void;
}) {
  const [copied, setCopied] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  return (
    <div class="shown-key">
      <label for={id}>{label}</label>
      <div class="shown-key-row">
        <input
          ref={input}
          id={id}
          readOnly
          value={apiKey}
          spellcheck={false}
          onFocus={(e) => e.currentTarget.select()}
        />
        <button
          type="button"
          onClick={async () =>
            setCopied(
              (await copy(input.current, apiKey)) ? 'Copied.' : 'Selected: press Ctrl+C (⌘C) to copy.',
            )
          }
        >
          Copy
        </button>
        {onDone && (
          <button type="button" class="secondary" onClick={onDone}>
            Done
          </button>
        )}
      </div>
      <p class="shown-once">
        <strong>Shown once.</strong> Sluice keeps only a hash of it: copy it now and keep it somewhere safe.
        If it is lost, create another key and delete this one.
      </p>
      <p class="notice" role="status">
        {copied}
      </p>
    </div>
  );
}
