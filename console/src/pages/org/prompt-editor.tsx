import { useState } from 'react';
import { post, put } from '../../api.ts';
import { Field, FormError, jsonObjectError, useApiForm } from '../../ui/form.tsx';

export type PromptKind = 'prompt' | 'partial';

/** A prompt or partial with its default version, as GET /v2/prompts[/partials]/{id} answers. */
export interface PromptDetail {
  id: string;
  slug: string;
  name: string;
  workspace_id: string;
  string: string;
  model?: string | null;
  virtual_key?: string | null;
  parameters?: Record<string, unknown>;
  default_version: number;
  prompt_version?: number;
  version?: number;
  prompt_version_description?: string | null;
  version_description?: string | null;
  last_updated_at: string;
}

export const basePath = (kind: PromptKind) => (kind === 'prompt' ? '/v2/prompts' : '/v2/prompts/partials');

interface Message {
  role: string;
  content: string;
}

/** The template as chat messages when it is a JSON array of them, else null (plain text). */
export function asMessages(template: string): Message[] | null {
  const text = template.trim();
  if (!text.startsWith('[')) return null;
  try {
    const value: unknown = JSON.parse(text);
    if (
      Array.isArray(value) &&
      value.every(
        (m) =>
          m &&
          typeof m === 'object' &&
          typeof (m as Message).role === 'string' &&
          typeof (m as Message).content === 'string',
      )
    ) {
      return value as Message[];
    }
  } catch {
    // plain text
  }
  return null;
}

const ROLES = ['system', 'developer', 'user', 'assistant'];
const FIELDS = [
  'name',
  'slug',
  'string',
  'model',
  'virtual_key',
  'parameters',
  'version_description',
  'workspace_id',
];

/**
 * Creates a prompt or partial, or changes one (a content change adds a version; the default
 * stays until "Make default" moves it). The template is plain Mustache text or chat messages.
 */
export function PromptEditor({
  kind,
  existing,
  workspaceId,
  onSaved,
  onCancel,
}: {
  kind: PromptKind;
  existing: PromptDetail | null;
  /** The workspace a new one is made in (an admin key must name it). */
  workspaceId: string | null;
  onSaved: (id: string) => void;
  onCancel?: () => void;
}) {
  const initialMessages = existing ? asMessages(existing.string) : null;
  const [name, setName] = useState(existing?.name ?? '');
  const [slug, setSlug] = useState('');
  const [mode, setMode] = useState<'text' | 'messages'>(initialMessages ? 'messages' : 'text');
  const [text, setText] = useState(existing && !initialMessages ? existing.string : '');
  const [messages, setMessages] = useState<Message[]>(
    initialMessages ?? [
      { role: 'system', content: '' },
      { role: 'user', content: '' },
    ],
  );
  const [model, setModel] = useState(existing?.model ?? '');
  const [integration, setIntegration] = useState(existing?.virtual_key ?? '');
  const [parameters, setParameters] = useState(
    existing?.parameters && Object.keys(existing.parameters).length
      ? JSON.stringify(existing.parameters, null, 2)
      : '{}',
  );
  const [description, setDescription] = useState('');
  const [paramsError, setParamsError] = useState<string | null>(null);

  const template = mode === 'text' ? text : JSON.stringify(messages.filter((m) => m.content.trim()));

  const form = useApiForm(
    async () => {
      const body: Record<string, unknown> = {};
      if (!existing || name !== existing.name) body.name = name;
      if (!existing) {
        if (slug.trim()) body.slug = slug.trim();
        if (workspaceId) body.workspace_id = workspaceId;
      }
      if (!existing || template !== existing.string) body.string = template;
      if (kind === 'prompt') {
        const paramError = jsonObjectError(parameters);
        setParamsError(paramError);
        if (paramError) throw new Error(`Parameters: ${paramError}`);
        const parsed = JSON.parse(parameters) as Record<string, unknown>;
        const modelValue = model.trim() || null;
        const keyValue = integration.trim() || null;
        if (!existing || modelValue !== (existing.model ?? null)) body.model = modelValue;
        if (!existing || keyValue !== (existing.virtual_key ?? null)) body.virtual_key = keyValue;
        if (!existing || JSON.stringify(parsed) !== JSON.stringify(existing.parameters ?? {}))
          body.parameters = parsed;
      }
      if (description.trim() && (!existing || Object.keys(body).some((k) => k !== 'name')))
        body.version_description = description.trim();
      if (!existing) return post<{ id: string }>(basePath(kind), body);
      if (Object.keys(body).length === 0) return { id: existing.id };
      await put(`${basePath(kind)}/${existing.id}`, body);
      return { id: existing.id };
    },
    (result) => onSaved(result.id),
  );

  const noun = kind === 'prompt' ? 'prompt' : 'partial';
  const setMessage = (index: number, patch: Partial<Message>) =>
    setMessages((all) => all.map((m, i) => (i === index ? { ...m, ...patch } : m)));

  return (
    <form
      className="card prompt-editor"
      aria-label={existing ? `Edit ${noun} ${existing.name}` : `New ${noun}`}
      onSubmit={(e) => void form.onSubmit(e)}
    >
      <h2>{existing ? `Edit ${existing.name}` : `New ${noun}`}</h2>
      <div className="org-form-grid">
        <Field label="Name" error={form.fieldError('name')}>
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={255} />
        </Field>
        {existing ? null : (
          <Field
            label="Slug"
            hint="Optional: 3–100 letters, digits, - or _. Made from the name when empty."
            error={form.fieldError('slug')}
          >
            <input value={slug} onChange={(e) => setSlug(e.target.value)} spellCheck={false} />
          </Field>
        )}
      </div>
      {form.fieldError('workspace_id') ? (
        <p className="field-error" role="alert">
          {form.fieldError('workspace_id')}
        </p>
      ) : null}
      {kind === 'prompt' ? (
        <fieldset className="org-fieldset">
          <legend>Template form</legend>
          <label>
            <input type="radio" name="mode" checked={mode === 'text'} onChange={() => setMode('text')} />{' '}
            Plain text (one user message)
          </label>{' '}
          <label>
            <input
              type="radio"
              name="mode"
              checked={mode === 'messages'}
              onChange={() => setMode('messages')}
            />{' '}
            Chat messages
          </label>
        </fieldset>
      ) : null}
      {mode === 'text' || kind === 'partial' ? (
        <Field
          label="Template"
          hint={
            <>
              Mustache: <code>{'{{variable}}'}</code>, <code>{'{{#flag}}…{{/flag}}'}</code>,{' '}
              <code>{'{{> partial-slug}}'}</code>.
            </>
          }
          error={form.fieldError('string')}
        >
          <textarea rows={6} value={text} onChange={(e) => setText(e.target.value)} spellCheck={false} />
        </Field>
      ) : (
        <fieldset
          className={`org-fieldset${form.fieldError('string') ? ' field-invalid' : ''}`}
          aria-describedby={form.fieldError('string') ? 'messages-error' : undefined}
        >
          <legend>Messages</legend>
          {messages.map((message, index) => (
            <div className="prompt-message" key={index}>
              <Field label={`Message ${index + 1} role`}>
                <select value={message.role} onChange={(e) => setMessage(index, { role: e.target.value })}>
                  {ROLES.map((r) => (
                    <option key={r}>{r}</option>
                  ))}
                </select>
              </Field>
              <Field label={`Message ${index + 1} content`}>
                <textarea
                  rows={3}
                  value={message.content}
                  spellCheck={false}
                  onChange={(e) => setMessage(index, { content: e.target.value })}
                />
              </Field>
              <button
                type="button"
                onClick={() => setMessages((all) => all.filter((_, i) => i !== index))}
                disabled={messages.length === 1}
              >
                Remove message {index + 1}
              </button>
            </div>
          ))}
          <button type="button" onClick={() => setMessages((all) => [...all, { role: 'user', content: '' }])}>
            Add message
          </button>
          {form.fieldError('string') ? (
            <small id="messages-error" className="field-error" role="alert">
              {form.fieldError('string')}
            </small>
          ) : null}
        </fieldset>
      )}
      {kind === 'prompt' ? (
        <div className="org-form-grid">
          <Field
            label="Model"
            hint="e.g. @mock/mock-1 or gpt-4o; empty leaves it to routing."
            error={form.fieldError('model')}
          >
            <input value={model} onChange={(e) => setModel(e.target.value)} spellCheck={false} />
          </Field>
          <Field
            label="Integration"
            hint='The integration slug, without "@" (optional).'
            error={form.fieldError('virtual_key')}
          >
            <input value={integration} onChange={(e) => setIntegration(e.target.value)} spellCheck={false} />
          </Field>
          <Field
            label="Parameters (JSON)"
            hint="Chat parameters: temperature, max_completion_tokens, …"
            error={form.fieldError('parameters') ?? paramsError ?? undefined}
          >
            <textarea
              rows={3}
              value={parameters}
              spellCheck={false}
              onChange={(e) => setParameters(e.target.value)}
            />
          </Field>
        </div>
      ) : null}
      <Field
        label="Version note"
        hint={existing ? 'Describes the new version a content change makes.' : 'Describes version 1.'}
        error={form.fieldError('version_description')}
      >
        <input value={description} onChange={(e) => setDescription(e.target.value)} maxLength={2000} />
      </Field>
      <FormError error={paramsError ? null : form.error} fields={FIELDS} />
      <div className="row">
        <button type="submit" disabled={form.busy}>
          {existing ? 'Save' : `Create ${noun}`}
        </button>
        {onCancel ? (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        ) : null}
      </div>
    </form>
  );
}
