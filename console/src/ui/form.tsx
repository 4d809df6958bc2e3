import { useId, useState, type FormEvent, type ReactElement, type ReactNode } from 'react';
import { cloneElement, isValidElement } from 'react';
import { ApiError } from '../api.ts';
import { ErrorBanner } from './feedback.tsx';

/**
 * A form's submit state: runs `submit`, and on an API error puts its message on the field the
 * error's `param` names (`name`, `config.retry.attempts`…), else above the form.
 */
export function useApiForm<T>(submit: () => Promise<T>, onDone?: (result: T) => void) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const onSubmit = async (event?: FormEvent) => {
    event?.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const result = await submit();
      onDone?.(result);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const param = error instanceof ApiError ? error.param : null;
  /** The error for the field `name` (also matched by its first path segment, `config` for `config.x`). */
  const fieldError = (name: string): string | undefined =>
    param && (param === name || param.startsWith(`${name}.`) || param.startsWith(`${name}[`))
      ? (error as ApiError).message
      : undefined;
  return { busy, error, setError, onSubmit, fieldError, fieldNames: param };
}

/**
 * The error of a form that no field of `fields` shows (so each message is shown exactly once).
 */
export function FormError({ error, fields }: { error: unknown; fields: readonly string[] }) {
  const param = error instanceof ApiError ? error.param : null;
  if (param && fields.some((f) => param === f || param.startsWith(`${f}.`) || param.startsWith(`${f}[`))) {
    return null;
  }
  return <ErrorBanner error={error} />;
}

/** A labelled control with its hint and error, wired with aria-describedby / aria-invalid. */
export function Field({
  label,
  hint,
  error,
  children,
}: {
  label: string;
  hint?: ReactNode;
  error?: string;
  children: ReactElement<Record<string, unknown>>;
}) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [hint ? hintId : null, error ? errorId : null].filter(Boolean).join(' ') || undefined;
  const control = isValidElement(children)
    ? cloneElement(children, {
        id,
        'aria-describedby': describedBy,
        'aria-invalid': error ? true : undefined,
      })
    : children;
  return (
    <div className={`field${error ? ' field-invalid' : ''}`}>
      <label htmlFor={id}>{label}</label>
      {control}
      {hint ? (
        <small id={hintId} className="muted">
          {hint}
        </small>
      ) : null}
      {error ? (
        <small id={errorId} className="field-error" role="alert">
          {error}
        </small>
      ) : null}
    </div>
  );
}

/** JSON text that must parse to an object; null when it does, else the parse error. */
export function jsonObjectError(text: string): string | null {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value) ? null : 'must be a JSON object';
  } catch (err) {
    return (err as Error).message;
  }
}
