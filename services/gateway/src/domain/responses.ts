import { randomBytes } from 'node:crypto';
import { AppError, BadRequest, NotFound } from '@switchyard/core';
import type { ChatBody } from '../providers/types.ts';
import type { GatewayContext, GatewayRequest, IncomingCall } from './gateway-request.ts';
import { everyTargetServes } from './route-targets.ts';
import {
  includesEncryptedReasoning,
  newResponseId,
  responseIdOfItem,
  shownResponse,
  type OutputItem,
  type ResponseObject,
  type ResponseShell,
} from './responses-answer.ts';
import { chatRequestOf, inputMessages, type ChatMessage, type ResponsesBody } from './responses-request.ts';

/** A translated response as the gateway keeps it: the response, and the whole conversation it ends. */
export interface StoredResponse {
  /** With its reasoning's encrypted content, which the client sees only if it asked for it. */
  response: ResponseObject;
  /** Whether the request asked for the reasoning's encrypted content (`include`). */
  encryptedReasoning?: boolean;
  /** The chat messages of every turn up to and including this response's output (not the instructions). */
  messages: ChatMessage[];
}

/** Where translated responses are kept for `previous_response_id`, by workspace and id. */
export interface ResponsesStore {
  get(workspaceId: string, id: string): Promise<StoredResponse | undefined>;
  /** Keeps a response; never delays or fails the request. */
  put(workspaceId: string, id: string, stored: StoredResponse): void;
  delete(workspaceId: string, id: string): Promise<void>;
}

/** A Responses request translated into a chat completion request. */
export interface TranslatedResponses {
  chat: ChatBody;
  shell: ResponseShell;
  /**
   * Keeps the final response (with all of its reasoning) for later `previous_response_id`s,
   * when the request is to be kept.
   */
  remember(response: ResponseObject): void;
}

/**
 * POST /v1/responses for providers without a Responses API of their own: the request becomes a
 * chat completion (run through ChatCompletions like any other, so routing, policies,
 * guardrails, the cache and the log apply) and its answer a Responses answer. The conversation
 * is kept (unless `store: false`) so that a later request can go on from it with
 * `previous_response_id` or name its items with `item_reference`, in the same workspace only.
 */
export class Responses {
  constructor(
    private readonly context: Pick<GatewayContext, 'providers' | 'inline' | 'integrations' | 'headerPrefix'>,
    private readonly store: ResponsesStore,
    /** Checks a chat completion request as the chat route checks the client's. */
    private readonly validate: (body: Record<string, unknown>) => ChatBody,
  ) {}

  /**
   * Whether the request goes as it came to the provider: every target it may route to (its own
   * choice, or each of its config's) speaks the OpenAI format, Responses API included. Anything
   * else, a target that cannot be resolved too, is translated (where routing then tells what
   * is wrong, as for a chat completion).
   */
  async forwardsAsIs(
    request: GatewayRequest,
    call: IncomingCall,
    model: string | undefined,
  ): Promise<boolean> {
    return everyTargetServes(
      this.context,
      request,
      call,
      model,
      (provider) => provider.forward !== undefined,
    );
  }

  /**
   * The chat completion request for a Responses request: the conversation of
   * `previous_response_id` first, `item_reference`s replaced by the items they name.
   */
  async translate(workspaceId: string, body: ResponsesBody): Promise<TranslatedResponses> {
    let history: ChatMessage[] = [];
    const previousId = body.previous_response_id;
    if (previousId) {
      const previous = await this.store.get(workspaceId, previousId);
      if (!previous) {
        throw new NotFound(
          `Previous response with id '${previousId}' not found: the gateway keeps the responses it translated for a limited time, each visible to its workspace only.`,
          { param: 'previous_response_id', code: 'previous_response_not_found' },
        );
      }
      history = previous.messages;
    }
    const input = Array.isArray(body.input)
      ? await this.resolveReferences(workspaceId, body.input)
      : body.input;
    const resolved = { ...body, input };
    const request = chatRequestOf(resolved, history);
    let chat: ChatBody;
    try {
      chat = this.validate(request);
    } catch (err) {
      if (!(err instanceof AppError) || err.status !== 400) throw err;
      throw new BadRequest(`The request cannot be translated into a chat completion: ${err.message}`, {
        param: 'input',
        code: 'invalid_request',
      });
    }
    const stored = body.store !== false;
    const shell: ResponseShell = { id: newResponseId(randomBytes(16).toString('hex')), body, stored };
    const messages = request.messages as ChatMessage[];
    const conversation = body.instructions ? messages.slice(1) : messages;
    return {
      chat,
      shell,
      remember: (response) => {
        if (!stored || response.status === 'in_progress') return;
        this.store.put(workspaceId, shell.id, {
          response,
          encryptedReasoning: includesEncryptedReasoning(body),
          // The assistant turn as an input of these items would be, its thinking signed as given.
          messages: [...conversation, ...inputMessages(response.output.map(inputItemOf))],
        });
      },
    };
  }

  /** A kept response of the workspace, as its request was answered; undefined when there is none (or it expired). */
  async stored(workspaceId: string, id: string): Promise<ResponseObject | undefined> {
    const stored = await this.store.get(workspaceId, id);
    return stored && shownResponse(stored.response, stored.encryptedReasoning === true);
  }

  /** Forgets a kept response; false when the workspace has none by that id. */
  async forget(workspaceId: string, id: string): Promise<boolean> {
    if (!(await this.store.get(workspaceId, id))) return false;
    await this.store.delete(workspaceId, id);
    return true;
  }

  /** The input with each `item_reference` replaced by the output item of a kept response it names. */
  private async resolveReferences(
    workspaceId: string,
    input: Array<Record<string, unknown>>,
  ): Promise<Array<Record<string, unknown>>> {
    if (!input.some((item) => item.type === 'item_reference')) return input;
    const responses = new Map<string, Promise<StoredResponse | undefined>>();
    return Promise.all(
      input.map(async (item, i) => {
        if (item.type !== 'item_reference') return item;
        const id = typeof item.id === 'string' ? item.id : '';
        const responseId = responseIdOfItem(id);
        let found: OutputItem | undefined;
        if (responseId) {
          if (!responses.has(responseId)) responses.set(responseId, this.store.get(workspaceId, responseId));
          found = (await responses.get(responseId))?.response.output.find((o) => o.id === id);
        }
        if (!found) {
          throw new NotFound(
            `Item with id '${id}' not found: an item_reference names an output item of a response the gateway keeps for this workspace.`,
            { param: `input[${i}].id`, code: 'item_not_found' },
          );
        }
        return inputItemOf(found);
      }),
    );
  }
}

/** An output item as the input item that would say the same. */
function inputItemOf(item: OutputItem): Record<string, unknown> {
  switch (item.type) {
    case 'message':
      return { role: 'assistant', content: item.content.map((part) => part.text).join('') };
    case 'reasoning':
      return { ...item };
    case 'function_call':
      return { type: 'function_call', call_id: item.call_id, name: item.name, arguments: item.arguments };
  }
}
