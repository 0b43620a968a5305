/**
 * A button that asks first, in the page: the question with a button that does it and one that
 * does not. Not `confirm()`: a browser may refuse dialogs to a page framed by another site
 * (the portal lives in an iframe), and an in-page question is read like the rest of the page.
 */

import { useState } from 'preact/hooks';

export function ConfirmButton({
  label,
  question,
  yes,
  onConfirm,
  disabled = false,
}: {
  label: string;
  question: string;
  /** The label of the button that does it. */
  yes: string;
  onConfirm(): void;
  disabled?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking)
    return (
      <button type="button" disabled={disabled} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  return (
    <span class="confirm inline-confirm">
      <span>{question}</span>
      <button
        type="button"
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        {yes}
      </button>
      <button type="button" class="secondary" autofocus onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}
