import type { ReactNode } from 'react';

/** A form's submit button (disabled while the request runs) and, when it can be left, Cancel. */
export function FormActions({
  busy,
  submit,
  onCancel,
}: {
  busy: boolean;
  submit: ReactNode;
  onCancel?: () => void;
}) {
  return (
    <div className="row">
      <button type="submit" disabled={busy}>
        {submit}
      </button>
      {onCancel ? (
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      ) : null}
    </div>
  );
}
