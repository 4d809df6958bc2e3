import { useId } from 'react';
import { scopesByArea, type KeyKind } from './scopes.ts';

/**
 * The scopes a key of `kind` can hold, as checkboxes grouped by area (a fieldset each, with a
 * box that checks the whole area). `error` is the API's message about the scopes, shown under
 * the picker; `badScope` the scope it named, marked on its checkbox.
 */
export function ScopePicker({
  kind,
  selected,
  onChange,
  error,
  badScope,
  emptyHint = 'None checked: the key gets every scope a key of this kind can hold.',
}: {
  kind: KeyKind;
  selected: ReadonlySet<string>;
  onChange: (next: Set<string>) => void;
  error?: string;
  badScope?: string | null;
  /** What leaving every box unchecked means. */
  emptyHint?: string;
}) {
  const id = useId();
  const groups = scopesByArea(kind);
  const set = (scopes: readonly string[], on: boolean) => {
    const next = new Set(selected);
    for (const s of scopes) {
      if (on) next.add(s);
      else next.delete(s);
    }
    onChange(next);
  };
  return (
    <fieldset
      className={`scope-picker${error ? ' field-invalid' : ''}`}
      aria-describedby={error ? `${id}-error` : `${id}-hint`}
      aria-invalid={error ? true : undefined}
    >
      <legend>Scopes</legend>
      <small id={`${id}-hint`} className="muted">
        {selected.size === 0 ? emptyHint : `${selected.size} checked.`}
      </small>
      {error ? (
        <small id={`${id}-error`} className="field-error" role="alert">
          {error}
        </small>
      ) : null}
      <div className="scope-groups">
        {groups.map((group) => {
          const all = group.scopes.every((s) => selected.has(s));
          const some = !all && group.scopes.some((s) => selected.has(s));
          return (
            <fieldset key={group.area} className="scope-group">
              <legend>
                <label>
                  <input
                    type="checkbox"
                    checked={all}
                    ref={(el) => {
                      if (el) el.indeterminate = some;
                    }}
                    onChange={(e) => set(group.scopes, e.target.checked)}
                    aria-label={`All ${group.area} scopes`}
                  />{' '}
                  {group.area}
                </label>
              </legend>
              {group.scopes.map((scope) => (
                <label key={scope} className={scope === badScope ? 'scope bad-scope' : 'scope'}>
                  <input
                    type="checkbox"
                    checked={selected.has(scope)}
                    onChange={(e) => set([scope], e.target.checked)}
                    aria-invalid={scope === badScope ? true : undefined}
                  />{' '}
                  <code>{scope}</code>
                </label>
              ))}
            </fieldset>
          );
        })}
      </div>
    </fieldset>
  );
}

/** The scope an API error's `param` (`scopes[3]`) names in the list that was sent. */
export function scopeNamed(param: string | null | undefined, sent: readonly string[]): string | null {
  const match = /^scopes\[(\d+)\]/.exec(param ?? '');
  return match ? (sent[Number(match[1])] ?? null) : null;
}
