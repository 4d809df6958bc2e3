import type { ReactNode } from 'react';
import { ApiError } from '../api.ts';

/** An error the API (or the network) answered, in words; `role="alert"` so screen readers hear it. */
export function ErrorBanner({ error }: { error: unknown }) {
  if (!error) return null;
  const message = error instanceof Error ? error.message : String(error);
  const code = error instanceof ApiError ? error.code : null;
  return (
    <div className="banner banner-error" role="alert">
      {message}
      {code ? <span className="muted"> ({code})</span> : null}
    </div>
  );
}

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p className="muted" role="status" aria-live="polite">
      {what}…
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty muted">{children}</p>;
}

/** A secret the API shows once (a new key, a SCIM token): copied, never shown again. */
export function SecretOnce({ label, value, onDone }: { label: string; value: string; onDone?: () => void }) {
  return (
    <div className="banner banner-secret" role="status">
      <p>
        <strong>{label}</strong>: shown once only. Copy it now; it cannot be shown again.
      </p>
      <code className="secret" data-testid="secret-value">
        {value}
      </code>
      <div className="row">
        <button type="button" onClick={() => void navigator.clipboard?.writeText(value)}>
          Copy
        </button>
        {onDone ? (
          <button type="button" onClick={onDone}>
            Done
          </button>
        ) : null}
      </div>
    </div>
  );
}
