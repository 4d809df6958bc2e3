import { z } from 'zod';
import {
  AppError,
  BadRequest,
  NotFound,
  NotImplemented,
  ServiceUnavailable,
  type Logger,
} from '@switchyard/core';
import { renderPrompt } from '@switchyard/rules';
import type { prompts } from '@switchyard/proto';
import type { PromptRunFields } from '../events/encoding.ts';
import type { GatewayHeaders } from './gateway-headers.ts';

/**
 * Saved prompts run through the gateway (POST /v1/prompts/:promptId/completions) and rendered
 * (POST /v1/prompts/:promptId/render): the prompt version is read from control-plane once and
 * kept (see PromptDirectory), rendered with the caller's variables, and made into the chat
 * completion request that chat completions then answer exactly as they answer their own.
 */

/** Which prompt version a request asks for: its id or slug, and "" (default), "latest" or a number. */
export interface PromptReference {
  idOrSlug: string;
  version: string;
}

/** Where the gateway finds a prompt version by organisation, workspace and reference; null when there is none (see PromptDirectory). */
export interface PromptSource {
  find(
    organisationId: string,
    workspaceId: string,
    reference: PromptReference,
  ): Promise<prompts.PromptRoute | null>;
}

/** The body of both routes: the variables, and chat parameters at the root that win over the prompt's. */
export const promptRunRequest = z
  .object({
    variables: z
      .record(z.string(), z.unknown())
      .describe("Values of the template's variables, by name (dotted names address nested objects)."),
    stream: z.boolean().optional().describe('Answer as a stream of chat completion chunks.'),
  })
  .catchall(z.unknown())
  .describe(
    "A prompt run: `variables`, and any chat completion parameter (temperature, max_completion_tokens, tools, response_format, user, metadata, ...) at the root, which wins over the prompt's own parameters. The messages come from the prompt's template.",
  );
export type PromptRunBody = z.infer<typeof promptRunRequest>;

/** The most characters of a `:promptId` (an id or slug, and `@version`). */
const MAX_PROMPT_ID = 300;
const PROMPT_ID = /^([A-Za-z0-9][A-Za-z0-9._~-]*)(?:@(latest|[1-9][0-9]{0,8}))?$/;

/** `<id or slug>`, `<id or slug>@<version number>` or `<id or slug>@latest`; a 400 naming `promptId` otherwise. */
export function parsePromptId(raw: string): PromptReference {
  const match = raw.length <= MAX_PROMPT_ID ? PROMPT_ID.exec(raw) : null;
  if (!match) {
    throw new BadRequest(
      'The prompt is named by its id or slug, optionally followed by @<version number> or @latest.',
      { param: 'promptId', code: 'invalid_prompt_id' },
    );
  }
  return { idOrSlug: match[1]!, version: match[2] ?? '' };
}

/** A prompt made ready to run: the chat completion request it becomes, and what the log records of it. */
export interface PreparedPrompt {
  prompt: prompts.PromptRoute;
  /** The chat completion request: the prompt's parameters, the caller's over them, the rendered messages and the model. */
  body: Record<string, unknown>;
  run: PromptRunFields;
}

export class PromptRuns {
  constructor(
    private readonly source: PromptSource,
    private readonly logger: Pick<Logger, 'warn'>,
  ) {}

  /**
   * The prompt `rawId` names in the caller's workspace, rendered with the body's variables into
   * a chat completion request. 404 when the workspace sees no such prompt (or version), 400
   * for missing variables, 503 when control-plane cannot answer in time.
   */
  async prepare(
    principal: { organisationId: string; workspaceId: string },
    rawId: string,
    input: PromptRunBody,
  ): Promise<PreparedPrompt> {
    const reference = parsePromptId(rawId);
    const prompt = await this.find(principal, reference, rawId);
    const { variables, ...overrides } = input;
    if ('messages' in overrides) {
      throw new BadRequest("A prompt's messages come from its template: leave out `messages`.", {
        param: 'messages',
      });
    }
    const messages = renderPrompt(prompt.template, prompt.partials, variables);
    const model = prompt.model !== '' ? prompt.model : overrides.model;
    const body: Record<string, unknown> = {
      ...parametersOf(prompt),
      ...overrides,
      ...(model === undefined ? {} : { model }),
      messages,
    };
    return {
      prompt,
      body,
      run: {
        promptId: prompt.id,
        promptSlug: prompt.slug,
        versionId: prompt.versionId,
        versionNumber: prompt.versionNumber,
      },
    };
  }

  private async find(
    principal: { organisationId: string; workspaceId: string },
    reference: PromptReference,
    rawId: string,
  ): Promise<prompts.PromptRoute> {
    let prompt: prompts.PromptRoute | null;
    try {
      prompt = await this.source.find(principal.organisationId, principal.workspaceId, reference);
    } catch (err) {
      if (err instanceof AppError && err.status === 501) {
        throw new NotImplemented('Prompts are not built yet in this control plane.');
      }
      if (err instanceof AppError && err.status >= 400 && err.status < 500 && err.status !== 408) {
        throw new BadRequest(err.message, { param: 'promptId', code: err.code });
      }
      this.logger.warn('the prompt directory cannot be read', { error: String(err) });
      throw new ServiceUnavailable('Prompts cannot be read right now; try again shortly.', {
        code: 'prompt_directory_unavailable',
        headers: { 'retry-after': '1' },
      });
    }
    // Control-plane finds only what the workspace may see; a prompt of another organisation is never run.
    if (!prompt || prompt.organisationId !== principal.organisationId) {
      throw new NotFound(`Prompt '${rawId}' does not exist in this workspace.`, {
        param: 'promptId',
        code: 'prompt_not_found',
      });
    }
    return prompt;
  }
}

/** The prompt's own chat parameters (a JSON object; none when empty). */
function parametersOf(prompt: prompts.PromptRoute): Record<string, unknown> {
  if (prompt.parametersJson.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(prompt.parametersJson);
  } catch {
    parsed = undefined;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new BadRequest(`The parameters of prompt '${prompt.slug}' are not a JSON object.`, {
      param: 'promptId',
      code: 'invalid_prompt_parameters',
    });
  }
  const { messages: _messages, ...rest } = parsed as Record<string, unknown>;
  return rest;
}

/**
 * The gateway headers a prompt completion runs with: the prompt's integration (`@<virtual_key>`)
 * as the provider, unless the request chose its provider, custom host or config itself.
 */
export function promptHeaders(headers: GatewayHeaders, prompt: prompts.PromptRoute): GatewayHeaders {
  if (
    prompt.virtualKey === '' ||
    headers.provider !== undefined ||
    headers.config !== undefined ||
    headers.customHost !== undefined
  ) {
    return headers;
  }
  return { ...headers, provider: `@${prompt.virtualKey}` };
}
