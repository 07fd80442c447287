// A destructive action asks once more, inline: the first button turns into "Yes, …" and
// "Cancel", with focus on the confirmation; Escape or Cancel goes back. No modal to trap focus.
import { useEffect, useRef, useState } from 'preact/hooks';

export function ConfirmButton(props: { label: string; question: string; confirmLabel: string; onConfirm: () => Promise<void> | void }) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const yes = useRef<HTMLButtonElement>(null);
  const start = useRef<HTMLButtonElement>(null);
  const wasAsking = useRef(false);
  useEffect(() => {
    if (asking) yes.current?.focus();
    else if (wasAsking.current) start.current?.focus();
    wasAsking.current = asking;
  }, [asking]);
  if (!asking) {
    return (
      <button type="button" ref={start} class="danger" onClick={() => setAsking(true)}>
        {props.label}
      </button>
    );
  }
  const confirm = async () => {
    setBusy(true);
    try {
      await props.onConfirm();
    } finally {
      setBusy(false);
      setAsking(false);
    }
  };
  return (
    // biome-ignore lint/a11y/useSemanticElements: an inline question and its two buttons inside a table row; a fieldset is a block with a legend
    <span class="confirm" role="group" aria-label={props.question} onKeyDown={(e) => e.key === 'Escape' && setAsking(false)}>
      <span class="question">{props.question}</span>
      <button type="button" ref={yes} class="danger" disabled={busy} onClick={confirm}>
        {props.confirmLabel}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}
