import Mustache from 'mustache';
import { BadRequest } from '@switchyard/core';

/**
 * Saved prompt templates: Mustache text whose `{{variables}}` the caller fills in and whose
 * `{{> partial}}` tags include saved partials by slug. A template is either a JSON array of
 * chat messages (each message's text is rendered on its own, so a value never breaks the
 * JSON around it) or plain text, which becomes one user message. Values are inserted as they
 * are: prompts are not HTML.
 */

/** How deep partials may include partials. */
export const MAX_PARTIAL_DEPTH = 8;
/** The most characters a rendered prompt may hold. */
export const MAX_RENDERED_CHARS = 2_000_000;

/** A chat message as a rendered prompt gives it: `role`, `content` and whatever else it held. */
export type PromptMessage = Record<string, unknown> & { role: string };

type Token = [string, string, number, number, Token[]?, ...unknown[]];

const noEscape = (value: unknown): string => String(value);

// Mustache keeps every template it parsed by default; templates here come from requests and
// saved prompts, so nothing is kept.
Mustache.templateCache = undefined;

function tokensOf(template: string, where: string): Token[] {
  try {
    return Mustache.parse(template) as unknown as Token[];
  } catch (error) {
    throw new BadRequest(`${where} is not a valid Mustache template: ${(error as Error).message}`, {
      code: 'invalid_prompt_template',
    });
  }
}

/** Walks the tokens, calling `visit` with each tag's kind and name (sections included). */
function walk(
  tokens: readonly Token[],
  visit: (kind: string, name: string, depth: number) => void,
  depth = 0,
) {
  for (const token of tokens) {
    const [kind, name] = token;
    if (kind === 'text') continue;
    visit(kind, name, depth);
    if ((kind === '#' || kind === '^') && Array.isArray(token[4])) walk(token[4], visit, depth + 1);
  }
}

/** The texts a template renders: each string `content` (and text part) of a JSON message array, or the whole text. */
function textsOf(template: string): string[] {
  const messages = messagesOf(template);
  if (!messages) return [template];
  const texts: string[] = [];
  for (const message of messages) {
    const content = message.content;
    if (typeof content === 'string') texts.push(content);
    else if (Array.isArray(content)) {
      for (const part of content) {
        if (part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string')
          texts.push((part as { text: string }).text);
      }
    }
  }
  return texts;
}

/** The template as a JSON array of chat messages, or undefined when it is text. */
function messagesOf(template: string): PromptMessage[] | undefined {
  const trimmed = template.trim();
  if (!trimmed.startsWith('[')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    return undefined;
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length === 0 ||
    !parsed.every(
      (message) =>
        message !== null &&
        typeof message === 'object' &&
        !Array.isArray(message) &&
        typeof (message as { role?: unknown }).role === 'string',
    )
  )
    return undefined;
  return parsed as PromptMessage[];
}

/**
 * The partial slugs a template (or partial) includes directly, checking its syntax: a 400
 * naming `where` when it is not valid Mustache.
 */
export function includedPartials(template: string, where = 'The template'): string[] {
  const names = new Set<string>();
  for (const text of textsOf(template)) {
    walk(tokensOf(text, where), (kind, name) => {
      if (kind === '>') names.add(name);
    });
  }
  return [...names];
}

/**
 * The variables a prompt uses, its partials' included: `required` ones are inserted as values
 * (`{{name}}`, `{{{name}}}`, `{{& name}}` outside any section); `sections` are `{{#name}}` and
 * `{{^name}}` blocks, which may be left out.
 */
export function promptVariables(
  template: string,
  partials: Readonly<Record<string, string>> = {},
): { required: string[]; sections: string[] } {
  const required = new Set<string>();
  const sections = new Set<string>();
  const seen = new Set<string>();
  const visitText = (text: string, where: string, depth: number) => {
    walk(tokensOf(text, where), (kind, name, sectionDepth) => {
      if ((kind === 'name' || kind === '&') && sectionDepth === 0) required.add(name);
      else if (kind === '#' || kind === '^') sections.add(name);
      else if (kind === '>') {
        if (seen.has(name) || !Object.hasOwn(partials, name)) return;
        seen.add(name);
        if (depth >= MAX_PARTIAL_DEPTH) return;
        visitText(partials[name]!, `Partial '${name}'`, depth + 1);
      }
    });
  };
  for (const text of textsOf(template)) visitText(text, 'The template', 0);
  return { required: [...required].filter((name) => name !== '.'), sections: [...sections] };
}

/**
 * Checks that every partial a template includes is given, and that partials do not include
 * themselves (directly or through others) nor nest deeper than {@link MAX_PARTIAL_DEPTH}.
 */
export function checkPartials(template: string, partials: Readonly<Record<string, string>>): void {
  const visit = (text: string, where: string, path: readonly string[]) => {
    for (const name of includedPartials(text, where)) {
      if (!Object.hasOwn(partials, name)) {
        throw new BadRequest(`${where} includes the partial '${name}', which does not exist.`, {
          code: 'prompt_partial_not_found',
        });
      }
      if (path.includes(name)) {
        throw new BadRequest(`The partial '${name}' includes itself (${[...path, name].join(' → ')}).`, {
          code: 'prompt_partial_cycle',
        });
      }
      if (path.length >= MAX_PARTIAL_DEPTH) {
        throw new BadRequest(`Partials nest deeper than ${MAX_PARTIAL_DEPTH} levels (${path.join(' → ')}).`, {
          code: 'prompt_partial_cycle',
        });
      }
      visit(partials[name]!, `Partial '${name}'`, [...path, name]);
    }
  };
  visit(template, 'The template', []);
}

/**
 * Renders a prompt into chat messages: a 400 naming every required variable not given (code
 * `missing_prompt_variables`) or a partial that is missing or includes itself.
 */
export function renderPrompt(
  template: string,
  partials: Readonly<Record<string, string>>,
  variables: Readonly<Record<string, unknown>>,
): PromptMessage[] {
  checkPartials(template, partials);
  const missing = promptVariables(template, partials).required.filter((name) => !hasPath(variables, name));
  if (missing.length > 0) {
    throw new BadRequest(`Missing prompt variables: ${missing.map((name) => `'${name}'`).join(', ')}.`, {
      param: 'variables',
      code: 'missing_prompt_variables',
    });
  }
  let size = 0;
  const render = (text: string): string => {
    const rendered = Mustache.render(text, variables, partials, { escape: noEscape });
    size += rendered.length;
    if (size > MAX_RENDERED_CHARS) {
      throw new BadRequest(`The rendered prompt is longer than ${MAX_RENDERED_CHARS} characters.`, {
        param: 'variables',
        code: 'prompt_too_long',
      });
    }
    return rendered;
  };
  const messages = messagesOf(template);
  if (!messages) return [{ role: 'user', content: render(template) }];
  return messages.map((message) => {
    const content = message.content;
    if (typeof content === 'string') return { ...message, content: render(content) };
    if (Array.isArray(content)) {
      return {
        ...message,
        content: content.map((part: unknown) =>
          part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string'
            ? { ...(part as object), text: render((part as { text: string }).text) }
            : part,
        ),
      };
    }
    return { ...message };
  });
}

/** Whether a dotted Mustache name (`user.name`) has a value in the variables. */
function hasPath(variables: Readonly<Record<string, unknown>>, name: string): boolean {
  let value: unknown = variables;
  for (const part of name.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, part)) return false;
    value = (value as Record<string, unknown>)[part];
  }
  return value !== undefined && value !== null;
}
