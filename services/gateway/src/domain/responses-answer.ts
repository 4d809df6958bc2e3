import { AppError, toAppError } from '@switchyard/core';
import { EventReader, eventFields } from './sse-relay.ts';
import type { ResponsesBody } from './responses-request.ts';
import {
  encryptedContentOf,
  isReasoningBlock,
  reasoningItem,
  thoughtSignatureOf,
  type Reasoning,
  type ReasoningBlock,
  type ReasoningItem,
} from './responses-reasoning.ts';

// A chat completion (whole, or streamed chunk by chunk) as the Responses API answers: a
// `response` object, or its stream of events, for providers the gateway translates for.

type Json = Record<string, unknown>;

/** The output items a Responses answer can hold here: the model's reasoning, assistant text and function calls. */
export type OutputItem =
  | ReasoningItem
  | {
      id: string;
      type: 'message';
      status: 'in_progress' | 'completed';
      role: 'assistant';
      content: Array<{ type: 'output_text'; text: string; annotations: []; logprobs: [] }>;
    }
  | {
      id: string;
      type: 'function_call';
      status: 'in_progress' | 'completed';
      call_id: string;
      name: string;
      arguments: string;
    };

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export interface ResponseObject extends Json {
  id: string;
  object: 'response';
  created_at: number;
  status: 'in_progress' | 'completed' | 'incomplete';
  model: string;
  output: OutputItem[];
  usage: ResponseUsage | null;
}

/** What a response says of the request it answers: its id and the settings it echoes. */
export interface ResponseShell {
  id: string;
  body: ResponsesBody;
  /** Whether the gateway keeps it (`store` not false, and a store to keep it in). */
  stored: boolean;
}

/** A new response id; the ids of its output items are made from it (see itemId). */
export function newResponseId(random: string): string {
  return `resp_${random}`;
}

/** The id of a response's output item at `index`: `msg_`, `fc_` or `rs_`, then `<response>_<index>`. */
function itemId(kind: 'msg' | 'fc' | 'rs', responseId: string, index: number): string {
  return `${kind}_${responseId.slice('resp_'.length)}_${index}`;
}

/** The response an output item id belongs to (see itemId); undefined for any other id. */
export function responseIdOfItem(id: string): string | undefined {
  const match = /^(?:msg|fc|rs)_([0-9a-f]{32})_\d+$/.exec(id);
  return match ? `resp_${match[1]}` : undefined;
}

/** The response object around `output`, echoing what the request asked for. */
function responseObject(
  shell: ResponseShell,
  fields: { status: ResponseObject['status']; createdAt: number; model: string; output: OutputItem[] },
  finish: { reason: string | undefined; usage: ResponseUsage | null },
): ResponseObject {
  const { body } = shell;
  const incomplete = incompleteReason(finish.reason);
  return {
    id: shell.id,
    object: 'response',
    created_at: fields.createdAt,
    status: fields.status === 'completed' && incomplete ? 'incomplete' : fields.status,
    error: null,
    incomplete_details: fields.status !== 'in_progress' && incomplete ? { reason: incomplete } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: fields.model,
    output: fields.output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
    store: shell.stored,
    temperature: body.temperature ?? 1,
    text: { format: body.text?.format ?? { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: 'disabled',
    usage: finish.usage,
    user: body.user ?? null,
    metadata: body.metadata ?? {},
  };
}

/** Whether the request asked for the reasoning's `encrypted_content` (`include`). */
export function includesEncryptedReasoning(body: Pick<ResponsesBody, 'include'>): boolean {
  return body.include?.includes('reasoning.encrypted_content') === true;
}

/**
 * An output item as the client sees it: a reasoning item's `encrypted_content` only when asked
 * for (the gateway keeps it, to go on from the response, either way).
 */
export function shownItem<T extends OutputItem>(item: T, encrypted: boolean): T {
  if (item.type !== 'reasoning' || encrypted || item.encrypted_content === undefined) return item;
  const { encrypted_content: _kept, ...shown } = item;
  return shown as T;
}

/** A response as the client sees it (see shownItem). */
export function shownResponse(response: ResponseObject, encrypted: boolean): ResponseObject {
  if (encrypted) return response;
  return { ...response, output: response.output.map((item) => shownItem(item, false)) };
}

function incompleteReason(finishReason: string | undefined): string | undefined {
  if (finishReason === 'length') return 'max_output_tokens';
  if (finishReason === 'content_filter') return 'content_filter';
  return undefined;
}

/** A chat completion's usage in the Responses API's terms. */
export function responseUsage(usage: unknown): ResponseUsage {
  const u = (usage ?? {}) as Json;
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  const input = n(u.prompt_tokens);
  const output = n(u.completion_tokens);
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: n((u.prompt_tokens_details as Json | undefined)?.cached_tokens) },
    output_tokens: output,
    output_tokens_details: {
      reasoning_tokens: n((u.completion_tokens_details as Json | undefined)?.reasoning_tokens),
    },
    total_tokens: n(u.total_tokens) || input + output,
  };
}

function messageItem(id: string, text: string, status: 'in_progress' | 'completed'): OutputItem {
  return {
    id,
    type: 'message',
    status,
    role: 'assistant',
    content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
  };
}

/** A whole chat completion (its first choice) as a `response` object. */
export function responseOfChat(shell: ResponseShell, chat: Json): ResponseObject {
  const choice = ((chat.choices as Json[] | undefined) ?? [])[0] ?? {};
  const message = (choice.message ?? {}) as Json;
  const output: OutputItem[] = [];
  /** The last reasoning item's, while it is the last item: the calls after it may add their signatures. */
  let reasoning: Reasoning | undefined;
  const blocks = Array.isArray(message.content_blocks) ? (message.content_blocks as Json[]) : [];
  if (blocks.some(isReasoningBlock)) {
    // In the order the model gave them: each run of thinking one reasoning item, each run of text a message.
    let thinking: ReasoningBlock[] = [];
    let text = '';
    const flush = () => {
      reasoning = undefined;
      if (thinking.length) {
        reasoning = { blocks: thinking, calls: {} };
        output.push(reasoningItem(itemId('rs', shell.id, output.length), reasoning));
      }
      if (text !== '') output.push(messageItem(itemId('msg', shell.id, output.length), text, 'completed'));
      thinking = [];
      text = '';
    };
    for (const block of blocks) {
      if (isReasoningBlock(block)) {
        if (text !== '') flush();
        thinking.push(block);
      } else if (block.type === 'text' && typeof block.text === 'string' && block.text !== '') {
        if (thinking.length) flush();
        text += block.text;
      }
    }
    flush();
  } else {
    const reasoningText = typeof message.reasoning_content === 'string' ? message.reasoning_content : '';
    const text = typeof message.content === 'string' ? message.content : '';
    if (reasoningText !== '') {
      reasoning = { blocks: [{ type: 'thinking', thinking: reasoningText }], calls: {} };
      output.push(reasoningItem(itemId('rs', shell.id, output.length), reasoning));
    }
    if (text !== '') {
      reasoning = undefined;
      output.push(messageItem(itemId('msg', shell.id, output.length), text, 'completed'));
    }
  }
  const calls = (message.tool_calls as Json[] | undefined) ?? [];
  for (const call of calls) {
    const signature = thoughtSignatureOf(call);
    if (!signature || typeof call.id !== 'string') continue;
    // A signed call's signature goes back with it: in the reasoning before the calls, or in one of its own.
    if (!reasoning) {
      reasoning = { blocks: [], calls: {} };
      output.push(reasoningItem(itemId('rs', shell.id, output.length), reasoning));
    }
    reasoning.calls[call.id] = signature;
    const at = output.length - 1;
    output[at] = reasoningItem(itemId('rs', shell.id, at), reasoning);
  }
  for (const call of calls) {
    const fn = (call.function ?? {}) as Json;
    output.push({
      id: itemId('fc', shell.id, output.length),
      type: 'function_call',
      status: 'completed',
      call_id: String(call.id ?? ''),
      name: String(fn.name ?? ''),
      arguments: String(fn.arguments ?? ''),
    });
  }
  return responseObject(
    shell,
    {
      status: 'completed',
      createdAt: typeof chat.created === 'number' ? chat.created : Math.floor(Date.now() / 1000),
      model: typeof chat.model === 'string' ? chat.model : shell.body.model,
      output,
    },
    {
      reason: typeof choice.finish_reason === 'string' ? choice.finish_reason : undefined,
      usage: responseUsage(chat.usage),
    },
  );
}

const encoder = new TextEncoder();

interface OpenCall {
  index: number;
  item: Extract<OutputItem, { type: 'function_call' }>;
}

/** The reasoning item being streamed: its thinking blocks so far, and whether a summary part is open. */
interface OpenReasoning extends Reasoning {
  index: number;
  item: ReasoningItem;
  /** What continues the last block: its `content_blocks` index, or `reasoning_content`. */
  source: number | 'reasoning' | undefined;
  partOpen: boolean;
}

/**
 * A chat completion stream as the Responses API's event stream, event by event as the chunks
 * arrive: `response.created` and `response.in_progress` with the first chunk, an output item
 * for each run of reasoning (a summary part per thinking block, and its text deltas), one for
 * the text (and its content part and deltas) and one for each tool call (and its argument
 * deltas), each closed when what follows begins or the choice finishes, then `response.completed` (or
 * `response.incomplete`) with the whole response and its usage. An error in the stream (an
 * error event, or the body failing) becomes an `error` event that ends it.
 */
export async function* responsesEvents(
  chat: AsyncIterable<Uint8Array>,
  shell: ResponseShell,
  hooks: {
    /** Told of the final response before it is sent, with all of its reasoning (see shownItem). */
    completed?: (response: ResponseObject) => void;
    /** Told of the chat stream failing (it is then ended with an error event). */
    failed?: (err: unknown) => void;
  } = {},
): AsyncGenerator<Uint8Array> {
  let sequence = 0;
  const event = (type: string, fields: Json): Uint8Array =>
    encoder.encode(
      `event: ${type}\ndata: ${JSON.stringify({ type, ...fields, sequence_number: sequence++ })}\n\n`,
    );
  const output: OutputItem[] = [];
  const encrypted = includesEncryptedReasoning(shell.body);
  let model = shell.body.model;
  let createdAt = Math.floor(Date.now() / 1000);
  let started = false;
  let text: { index: number; item: Extract<OutputItem, { type: 'message' }> } | undefined;
  const calls = new Map<number, OpenCall>();
  let reasoning: OpenReasoning | undefined;
  let finishReason: string | undefined;
  let usage: ResponseUsage | null = null;
  /** The whole response so far, as the gateway keeps it (the client sees it through shownResponse). */
  const snapshot = (status: ResponseObject['status']) =>
    responseObject(
      shell,
      { status, createdAt, model, output: structuredClone(output) },
      {
        reason: finishReason,
        usage: status === 'in_progress' ? null : (usage ?? responseUsage(undefined)),
      },
    );

  function* start(chunk: Json | undefined): Generator<Uint8Array> {
    if (started) return;
    started = true;
    if (typeof chunk?.model === 'string' && chunk.model !== '') model = chunk.model;
    if (typeof chunk?.created === 'number') createdAt = chunk.created;
    yield event('response.created', { response: shownResponse(snapshot('in_progress'), encrypted) });
    yield event('response.in_progress', { response: shownResponse(snapshot('in_progress'), encrypted) });
  }

  function* closeSummaryPart(): Generator<Uint8Array> {
    if (!reasoning?.partOpen) return;
    const { index, item } = reasoning;
    const summaryIndex = item.summary.length - 1;
    const part = item.summary[summaryIndex]!;
    const common = { item_id: item.id, output_index: index, summary_index: summaryIndex };
    yield event('response.reasoning_summary_text.done', { ...common, text: part.text });
    yield event('response.reasoning_summary_part.done', { ...common, part: { ...part } });
    reasoning.partOpen = false;
  }

  function* closeReasoning(): Generator<Uint8Array> {
    if (!reasoning) return;
    yield* closeSummaryPart();
    const { index, item } = reasoning;
    const content = encryptedContentOf(reasoning);
    if (content !== undefined) item.encrypted_content = content;
    yield event('response.output_item.done', { output_index: index, item: shownItem(item, encrypted) });
    reasoning = undefined;
  }

  /** The open reasoning item; the text before it is its own item, closed first. */
  function* openReasoning(): Generator<Uint8Array, OpenReasoning> {
    if (reasoning) return reasoning;
    yield* closeText();
    const index = output.length;
    const item: ReasoningItem = { id: itemId('rs', shell.id, index), type: 'reasoning', summary: [] };
    output.push(item);
    reasoning = { index, item, blocks: [], calls: {}, source: undefined, partOpen: false };
    yield event('response.output_item.added', { output_index: index, item: { ...item, summary: [] } });
    return reasoning;
  }

  function* onThinking(
    source: number | 'reasoning',
    thinking: string,
    signature: string | undefined,
  ): Generator<Uint8Array> {
    const open = yield* openReasoning();
    let block = open.blocks.at(-1);
    if (block?.type !== 'thinking' || open.source !== source) {
      yield* closeSummaryPart();
      block = { type: 'thinking', thinking: '' };
      open.blocks.push(block);
      open.source = source;
    }
    if (thinking !== '') {
      const { index, item } = open;
      if (!open.partOpen) {
        item.summary.push({ type: 'summary_text', text: '' });
        open.partOpen = true;
        yield event('response.reasoning_summary_part.added', {
          item_id: item.id,
          output_index: index,
          summary_index: item.summary.length - 1,
          part: { type: 'summary_text', text: '' },
        });
      }
      block.thinking += thinking;
      item.summary.at(-1)!.text += thinking;
      yield event('response.reasoning_summary_text.delta', {
        item_id: item.id,
        output_index: index,
        summary_index: item.summary.length - 1,
        delta: thinking,
      });
    }
    if (signature) block.signature = (block.signature ?? '') + signature;
  }

  /** Redacted thinking comes whole, with nothing to show. */
  function* onRedacted(data: string): Generator<Uint8Array> {
    const open = yield* openReasoning();
    yield* closeSummaryPart();
    open.blocks.push({ type: 'redacted_thinking', data });
    open.source = undefined;
  }

  function* closeText(): Generator<Uint8Array> {
    if (!text) return;
    const { index, item } = text;
    const part = item.content[0]!;
    const common = { item_id: item.id, output_index: index, content_index: 0 };
    yield event('response.output_text.done', { ...common, text: part.text, logprobs: [] });
    yield event('response.content_part.done', { ...common, part });
    item.status = 'completed';
    yield event('response.output_item.done', { output_index: index, item });
    text = undefined;
  }

  function* closeCalls(): Generator<Uint8Array> {
    for (const { index, item } of calls.values()) {
      if (item.status === 'completed') continue;
      yield event('response.function_call_arguments.done', {
        item_id: item.id,
        output_index: index,
        name: item.name,
        arguments: item.arguments,
      });
      item.status = 'completed';
      yield event('response.output_item.done', { output_index: index, item });
    }
  }

  function* onText(delta: string): Generator<Uint8Array> {
    yield* closeReasoning();
    if (!text) {
      const index = output.length;
      const item = messageItem(itemId('msg', shell.id, index), '', 'in_progress') as Extract<
        OutputItem,
        { type: 'message' }
      >;
      output.push(item);
      text = { index, item };
      yield event('response.output_item.added', { output_index: index, item: { ...item, content: [] } });
      yield event('response.content_part.added', {
        item_id: item.id,
        output_index: index,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
      });
    }
    text.item.content[0]!.text += delta;
    yield event('response.output_text.delta', {
      item_id: text.item.id,
      output_index: text.index,
      content_index: 0,
      delta,
      logprobs: [],
    });
  }

  function* onToolCall(call: Json): Generator<Uint8Array> {
    const key = typeof call.index === 'number' ? call.index : 0;
    const fn = (call.function ?? {}) as Json;
    let open = calls.get(key);
    if (!open) {
      const signature = thoughtSignatureOf(call);
      // A signed call's signature goes back with it: in the reasoning before it, or in one of its own.
      if (signature && typeof call.id === 'string') (yield* openReasoning()).calls[call.id] = signature;
      // The reasoning or text before a call is its own item, closed before the call's.
      yield* closeReasoning();
      yield* closeText();
      const index = output.length;
      const item: OpenCall['item'] = {
        id: itemId('fc', shell.id, index),
        type: 'function_call',
        status: 'in_progress',
        call_id: typeof call.id === 'string' ? call.id : `call_${shell.id.slice(5)}_${index}`,
        name: typeof fn.name === 'string' ? fn.name : '',
        arguments: '',
      };
      output.push(item);
      open = { index, item };
      calls.set(key, open);
      yield event('response.output_item.added', { output_index: index, item: { ...item } });
    }
    if (typeof fn.arguments === 'string' && fn.arguments !== '') {
      open.item.arguments += fn.arguments;
      yield event('response.function_call_arguments.delta', {
        item_id: open.item.id,
        output_index: open.index,
        delta: fn.arguments,
      });
    }
  }

  const reader = new EventReader();
  // `data: [DONE]` ends the chat stream; the body ends with it.
  const chunksOf = (raw: string[]): Json[] => {
    const chunks: Json[] = [];
    for (const one of raw) {
      const { data } = eventFields(one);
      if (data === undefined || data.trim() === '[DONE]') continue;
      try {
        chunks.push(JSON.parse(data) as Json);
      } catch {
        // A chunk that is not JSON carries nothing to translate.
      }
    }
    return chunks;
  };
  /** One chat chunk's part of the answer; false when it was an error, which ends the stream. */
  function* onChunk(chunk: Json): Generator<Uint8Array, boolean> {
    if (chunk.error) {
      yield* start(undefined);
      yield errorEvent(event, chunk.error as Json);
      return false;
    }
    yield* start(chunk);
    if (chunk.usage) usage = responseUsage(chunk.usage);
    const choice = ((chunk.choices as Json[] | undefined) ?? []).find((c) => (c.index ?? 0) === 0);
    if (!choice) return true;
    const delta = (choice.delta ?? {}) as Json;
    if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '') {
      yield* onThinking('reasoning', delta.reasoning_content, undefined);
    }
    for (const block of (delta.content_blocks as Json[] | undefined) ?? []) {
      const at = typeof block.index === 'number' ? block.index : 0;
      if (block.type === 'redacted_thinking' && typeof block.data === 'string') yield* onRedacted(block.data);
      if (block.type === 'thinking' && typeof block.thinking === 'string') {
        yield* onThinking(
          at,
          block.thinking,
          typeof block.signature === 'string' ? block.signature : undefined,
        );
      }
      if (block.type === 'text' && typeof block.text === 'string' && block.text !== '')
        yield* onText(block.text);
    }
    if (typeof delta.content === 'string' && delta.content !== '') yield* onText(delta.content);
    for (const call of (delta.tool_calls as Json[] | undefined) ?? []) yield* onToolCall(call);
    if (typeof choice.finish_reason === 'string') {
      finishReason = choice.finish_reason;
      yield* closeReasoning();
      yield* closeText();
      yield* closeCalls();
    }
    return true;
  }

  try {
    for await (const bytes of chat) {
      for (const chunk of chunksOf(reader.push(bytes))) if (!(yield* onChunk(chunk))) return;
    }
    for (const chunk of chunksOf(reader.end())) if (!(yield* onChunk(chunk))) return;
  } catch (err) {
    hooks.failed?.(err);
    yield* start(undefined);
    // As the chat route says it: a provider's own failure by its message, anything else in general.
    const error = toAppError(err).toBody().error as Json;
    const message = err instanceof AppError ? error.message : 'The upstream stream failed.';
    yield errorEvent(event, { ...error, message });
    return;
  }
  yield* start(undefined);
  yield* closeReasoning();
  yield* closeText();
  yield* closeCalls();
  const final = snapshot('completed');
  hooks.completed?.(final);
  yield event(final.status === 'incomplete' ? 'response.incomplete' : 'response.completed', {
    response: shownResponse(final, encrypted),
  });
}

/** An `error` event: its fields at the top (as the API documents them) and under `error` (as clients read them). */
function errorEvent(event: (type: string, fields: Json) => Uint8Array, error: Json): Uint8Array {
  const fields = {
    type: typeof error.type === 'string' ? error.type : 'server_error',
    code: typeof error.code === 'string' ? error.code : 'upstream_error',
    message: typeof error.message === 'string' ? error.message : 'The upstream stream failed.',
    param: typeof error.param === 'string' ? error.param : null,
  };
  return event('error', { code: fields.code, message: fields.message, param: fields.param, error: fields });
}
