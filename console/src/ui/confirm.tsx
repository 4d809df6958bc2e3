import { useId, useState, type ReactNode } from 'react';
import { ErrorBanner } from './feedback.tsx';

/**
 * A destructive action behind a second step. The first press asks in words (an alertdialog named
 * by `label`, focus on its confirm button); the second does it. Escape or Cancel backs out.
 * When `onConfirm` returns a promise, the confirm button is busy until it settles and its error,
 * if any, is shown in the question (which stays open to try again).
 */
export function ConfirmButton({
  label,
  question,
  confirmLabel,
  onConfirm,
  busy,
  disabled,
  className = 'danger',
}: {
  /** The first button's text, and the question's accessible name. */
  label: string;
  /** The question; defaults to the confirm button's words with a question mark. */
  question?: ReactNode;
  /** The confirm button's text; defaults to "Yes, <label lower-cased>". */
  confirmLabel?: string;
  onConfirm: () => unknown;
  busy?: boolean;
  disabled?: boolean;
  className?: string;
}) {
  const [asking, setAsking] = useState(false);
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const questionId = useId();
  const yes = confirmLabel ?? `Yes, ${label.toLowerCase()}`;
  const back = () => {
    setAsking(false);
    setError(null);
  };
  if (!asking) {
    return (
      <button type="button" className={className} disabled={disabled || busy} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <div
      className="confirm"
      role="alertdialog"
      aria-label={label}
      aria-describedby={questionId}
      onKeyDown={(e) => {
        if (e.key === 'Escape') back();
      }}
    >
      <p id={questionId}>{question ?? `${yes}?`}</p>
      <div className="row">
        <button
          type="button"
          className="danger"
          autoFocus
          disabled={busy || running}
          aria-busy={busy || running}
          onClick={() => {
            setError(null);
            const result = onConfirm();
            if (!(result instanceof Promise)) {
              setAsking(false);
              return;
            }
            setRunning(true);
            result.then(
              () => {
                setRunning(false);
                setAsking(false);
              },
              (err: unknown) => {
                setRunning(false);
                setError(err);
              },
            );
          }}
        >
          {yes}
        </button>
        <button type="button" onClick={back}>
          Cancel
        </button>
      </div>
      <ErrorBanner error={error} />
    </div>
  );
}
