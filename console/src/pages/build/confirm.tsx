import { useState, type ReactNode } from 'react';

/**
 * A destructive action behind a second step: the first press asks in words (role alertdialog,
 * focus on its confirm button), the second does it. Escape or Cancel backs out.
 */
export function ConfirmButton({
  label,
  question,
  confirmLabel,
  onConfirm,
  busy,
  disabled,
}: {
  label: string;
  question: ReactNode;
  confirmLabel: string;
  onConfirm: () => void;
  busy?: boolean;
  disabled?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" className="danger" disabled={disabled || busy} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <div
      className="confirm"
      role="alertdialog"
      aria-label={label}
      onKeyDown={(e) => {
        if (e.key === 'Escape') setAsking(false);
      }}
    >
      <p>{question}</p>
      <div className="row">
        <button
          type="button"
          className="danger"
          autoFocus
          disabled={busy}
          onClick={() => {
            onConfirm();
            setAsking(false);
          }}
        >
          {confirmLabel}
        </button>
        <button type="button" onClick={() => setAsking(false)}>
          Cancel
        </button>
      </div>
    </div>
  );
}

/** A date the API answered, in the reader's locale; a dash for none. */
export function when(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : '—';
}
