import { useMemo, useState } from 'react';
import { post } from '../../api.ts';
import { useAuth } from '../../auth.tsx';
import { Field, FormError, useApiForm } from '../../ui/form.tsx';
import type { PromptDetail } from './prompt-editor.tsx';

/** The variables a Mustache template names (sections' names too; never partials or comments). */
export function templateVariables(template: string): string[] {
  const names = new Set<string>();
  for (const match of template.matchAll(/\{\{\{?\s*([#^&]?)\s*([\w.-]+)\s*\}?\}\}/g)) {
    const name = match[2]!;
    if (name !== '.') names.add(name);
  }
  return [...names];
}

interface Rendered {
  success: boolean;
  data: { model?: string; messages: { role: string; content: unknown }[] } & Record<string, unknown>;
}
interface Completion {
  model?: string;
  choices?: { message?: { role: string; content: string | null }; finish_reason?: string }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number };
}

function text(content: unknown): string {
  if (typeof content === 'string') return content;
  return JSON.stringify(content, null, 2);
}

/**
 * Fills a prompt's variables and renders it (the chat request it makes) or runs it through the
 * gateway (`POST /v1/prompts/{id}/completions`), showing the model's answer.
 */
export function PromptPlayground({
  prompt,
  versions,
}: {
  prompt: PromptDetail;
  versions: readonly number[];
}) {
  const { identity, can } = useAuth();
  const detected = useMemo(() => templateVariables(prompt.string), [prompt.string]);
  const [extra, setExtra] = useState<string[]>([]);
  const [newName, setNewName] = useState('');
  const [values, setValues] = useState<Record<string, string>>({});
  const [version, setVersion] = useState('');
  const [rendered, setRendered] = useState<Rendered['data'] | null>(null);
  const [answer, setAnswer] = useState<Completion | null>(null);
  const names = [...detected, ...extra.filter((n) => !detected.includes(n))];
  // An empty field is a variable not given (the API names the ones a template needs).
  const variables = Object.fromEntries(names.filter((n) => values[n]).map((n) => [n, values[n]]));
  const ref = version ? `${prompt.id}@${version}` : prompt.id;
  // The gateway runs prompts for a credential bound to a workspace; an admin key renders through
  // the control-plane's route, which takes it.
  const inWorkspace = identity.workspace !== null;
  const canRun = inWorkspace && can('completions.write');

  const render = useApiForm(async () => {
    setAnswer(null);
    const result = inWorkspace
      ? await post<Rendered>(`/v1/prompts/${encodeURIComponent(ref)}/render`, { variables })
      : await post<Rendered>(
          `/v2/prompts/${prompt.id}/render`,
          { variables },
          { version: version || undefined },
        );
    setRendered(result.data);
  });
  const run = useApiForm(async () => {
    const rendering = post<Rendered>(`/v1/prompts/${encodeURIComponent(ref)}/render`, { variables });
    const completion = await post<Completion>(`/v1/prompts/${encodeURIComponent(ref)}/completions`, {
      variables,
    });
    setAnswer(completion);
    setRendered((await rendering).data);
  });
  const error = run.error ?? render.error;
  const variablesError = run.fieldError('variables') ?? render.fieldError('variables');
  const busy = run.busy || render.busy;

  return (
    <section className="card playground" aria-labelledby="playground-heading">
      <h2 id="playground-heading">Playground</h2>
      <form onSubmit={(e) => void (canRun ? run.onSubmit(e) : render.onSubmit(e))}>
        <Field label="Version" hint="The default version unless you pick another.">
          <select value={version} onChange={(e) => setVersion(e.target.value)}>
            <option value="">Default (version {prompt.default_version})</option>
            {versions.map((v) => (
              <option key={v} value={String(v)}>
                Version {v}
              </option>
            ))}
          </select>
        </Field>
        <fieldset
          className={`org-fieldset${variablesError ? ' field-invalid' : ''}`}
          aria-describedby={variablesError ? 'variables-error' : undefined}
        >
          <legend>Variables</legend>
          <p className="muted">Empty fields are left out.</p>
          {names.length === 0 ? <p className="muted">The template uses no variables.</p> : null}
          {names.map((name) => (
            <Field key={name} label={name}>
              <textarea
                rows={1}
                value={values[name] ?? ''}
                onChange={(e) => setValues((all) => ({ ...all, [name]: e.target.value }))}
              />
            </Field>
          ))}
          <div className="row">
            <Field label="Another variable" hint="One a partial uses, say.">
              <input value={newName} onChange={(e) => setNewName(e.target.value)} spellCheck={false} />
            </Field>
            <button
              type="button"
              onClick={() => {
                const name = newName.trim();
                if (name && !names.includes(name)) setExtra((all) => [...all, name]);
                setNewName('');
              }}
            >
              Add variable
            </button>
          </div>
          {variablesError ? (
            <small id="variables-error" className="field-error" role="alert">
              {variablesError}
            </small>
          ) : null}
        </fieldset>
        <FormError error={error} fields={['variables']} />
        <div className="row">
          {canRun ? (
            <button type="submit" disabled={busy}>
              Run
            </button>
          ) : null}
          <button
            type={canRun ? 'button' : 'submit'}
            className={canRun ? '' : 'primary'}
            disabled={busy}
            onClick={canRun ? () => void render.onSubmit() : undefined}
          >
            Render only
          </button>
          {busy ? (
            <span role="status" className="muted">
              Working…
            </span>
          ) : null}
        </div>
        {!canRun ? (
          <p className="muted">
            Running a prompt through the gateway needs a credential of a workspace with the completions.write
            scope (a workspace API key); this one can render it only.
          </p>
        ) : null}
      </form>
      {rendered ? (
        <div className="playground-output" aria-label="Rendered messages" role="region">
          <h3>Rendered request{rendered.model ? ` for ${rendered.model}` : ''}</h3>
          <ol className="prompt-rendered">
            {rendered.messages.map((m, i) => (
              <li key={i}>
                <strong>{m.role}</strong>
                <pre>{text(m.content)}</pre>
              </li>
            ))}
          </ol>
        </div>
      ) : null}
      {answer ? (
        <div className="playground-output" aria-label="Answer" role="region">
          <h3>Answer{answer.model ? ` from ${answer.model}` : ''}</h3>
          <pre className="prompt-answer">{answer.choices?.[0]?.message?.content ?? '(no text)'}</pre>
          {answer.usage ? (
            <p className="muted">
              {answer.usage.prompt_tokens ?? 0} prompt + {answer.usage.completion_tokens ?? 0} completion
              tokens; finish reason {answer.choices?.[0]?.finish_reason ?? '—'}
            </p>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
