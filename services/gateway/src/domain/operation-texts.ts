/**
 * Where the texts are in the JSON of each model operation the guardrails check, in the
 * OpenAI-compatible wire formats the gateway serves (and the Anthropic Messages format it
 * accepts): the texts of a request the input checks read, and the answer units the output
 * checks decide on. Anything that is not a string where a text is expected is skipped, never
 * refused: bodies are validated where the operation is specified, or passed through.
 */

/** A text of a body, and how to put a (redacted) text back where it was read. */
export interface TextPart {
  text: string;
  put(text: string): void;
}

/** One answer unit the output guardrails decide on: a chat choice, a completion choice, a
 *  message, a response's output. `withhold()` empties its text and marks it filtered in the
 *  operation's own terms. */
export interface AnswerUnit {
  parts: TextPart[];
  withhold(): void;
}

/** The operations whose texts guardrails read; the key is the path after /v1. */
export type TextOperation = 'chat' | 'completions' | 'embeddings' | 'messages' | 'responses';

const OPERATIONS: Readonly<Record<string, TextOperation>> = {
  '/chat/completions': 'chat',
  '/completions': 'completions',
  '/embeddings': 'embeddings',
  '/messages': 'messages',
  '/responses': 'responses',
};

/** The operation of a request by its method and its path after `/v1`; undefined for any other. */
export function textOperation(method: string, pathname: string): TextOperation | undefined {
  if (method !== 'POST' || !Object.hasOwn(OPERATIONS, pathname)) return undefined;
  return OPERATIONS[pathname];
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The field `key` of `holder` as a part, when it is a string. */
function field(holder: Json, key: string, parts: TextPart[], after?: () => void): void {
  const text = holder[key];
  if (typeof text !== 'string') return;
  parts.push({
    text,
    put: (replaced) => {
      holder[key] = replaced;
      after?.();
    },
  });
}

/** `holder[key]` when it is a string, or the strings of it when it is an array (a prompt, an input; token ids are no text). */
function strings(holder: Json, key: string, parts: TextPart[]): void {
  const value = holder[key];
  if (typeof value === 'string') {
    field(holder, key, parts);
    return;
  }
  if (!Array.isArray(value)) return;
  value.forEach((entry, i) => {
    if (typeof entry !== 'string') return;
    parts.push({
      text: entry,
      put: (replaced) => {
        value[i] = replaced;
      },
    });
  });
}

/** A content: a string, or parts of which those of the given types carry a `text`. */
function content(holder: Json, key: string, types: readonly string[], parts: TextPart[]): void {
  const value = holder[key];
  if (typeof value === 'string') {
    field(holder, key, parts);
    return;
  }
  if (!Array.isArray(value)) return;
  for (const part of value) {
    if (isObject(part) && typeof part.type === 'string' && types.includes(part.type)) {
      field(part, 'text', parts);
    }
  }
}

/** The `content` of each object of `holder[key]`, an array of messages or items. */
function contents(holder: Json, key: string, types: readonly string[], parts: TextPart[]): void {
  const list = holder[key];
  if (!Array.isArray(list)) return;
  for (const item of list) if (isObject(item)) content(item, 'content', types, parts);
}

const TEXT = ['text'] as const;
const RESPONSE_INPUT = ['input_text', 'output_text', 'text'] as const;

/** The texts of a request body the input checks read (mutating `put`s write into `body`). */
export function requestTexts(operation: TextOperation, body: Record<string, unknown>): TextPart[] {
  const parts: TextPart[] = [];
  if (!isObject(body)) return parts;
  switch (operation) {
    case 'chat':
      contents(body, 'messages', TEXT, parts);
      break;
    case 'completions':
      strings(body, 'prompt', parts);
      break;
    case 'embeddings':
      strings(body, 'input', parts);
      break;
    case 'messages':
      content(body, 'system', TEXT, parts);
      contents(body, 'messages', TEXT, parts);
      break;
    case 'responses':
      field(body, 'instructions', parts);
      if (typeof body.input === 'string') field(body, 'input', parts);
      else contents(body, 'input', RESPONSE_INPUT, parts);
      break;
  }
  return parts;
}

/**
 * The units of a non-streamed answer body the output checks read; [] for embeddings. A unit
 * with no text (a chat choice that only calls tools, a response's function call) is not one.
 */
export function answerUnits(operation: TextOperation, answer: Record<string, unknown>): AnswerUnit[] {
  if (!isObject(answer)) return [];
  switch (operation) {
    case 'chat':
      return choiceUnits(answer, (choice, parts) => {
        if (isObject(choice.message)) field(choice.message, 'content', parts);
        return () => {
          (choice.message as Json).content = '';
          choice.finish_reason = 'content_filter';
        };
      });
    case 'completions':
      return choiceUnits(answer, (choice, parts) => {
        field(choice, 'text', parts);
        return () => {
          choice.text = '';
          choice.finish_reason = 'content_filter';
        };
      });
    case 'embeddings':
      return [];
    case 'messages':
      return messageUnits(answer);
    case 'responses':
      return responseUnits(answer);
  }
}

/** One unit per choice that holds a text; `read` lists the choice's parts and answers its withhold. */
function choiceUnits(answer: Json, read: (choice: Json, parts: TextPart[]) => () => void): AnswerUnit[] {
  if (!Array.isArray(answer.choices)) return [];
  const units: AnswerUnit[] = [];
  for (const choice of answer.choices) {
    if (!isObject(choice)) continue;
    const parts: TextPart[] = [];
    const withhold = read(choice, parts);
    if (parts.length > 0) units.push({ parts, withhold });
  }
  return units;
}

/** An Anthropic message is one unit, its text blocks; a withheld one is refused with no content. */
function messageUnits(answer: Json): AnswerUnit[] {
  if (!Array.isArray(answer.content)) return [];
  const parts: TextPart[] = [];
  content(answer, 'content', TEXT, parts);
  if (parts.length === 0) return [];
  return [
    {
      parts,
      withhold: () => {
        answer.content = [];
        answer.stop_reason = 'refusal';
      },
    },
  ];
}

/**
 * A response has one unit per message item of its output, its `output_text` parts; a withheld
 * one has no content, and the response is incomplete for a content filter. The SDKs'
 * `output_text` (all output texts together), when the answer carries it, follows every change.
 */
function responseUnits(answer: Json): AnswerUnit[] {
  if (!Array.isArray(answer.output)) return [];
  const output = answer.output as unknown[];
  const refresh = () => {
    if (typeof answer.output_text === 'string') answer.output_text = outputText(output);
  };
  const units: AnswerUnit[] = [];
  for (const item of output) {
    if (!isObject(item) || item.type !== 'message' || !Array.isArray(item.content)) continue;
    const parts: TextPart[] = [];
    for (const part of item.content) {
      if (isObject(part) && part.type === 'output_text') field(part, 'text', parts, refresh);
    }
    if (parts.length === 0) continue;
    units.push({
      parts,
      withhold: () => {
        item.content = [];
        answer.status = 'incomplete';
        answer.incomplete_details = { reason: 'content_filter' };
        refresh();
      },
    });
  }
  return units;
}

/** Every output text of a response's message items, in order and joined as the SDKs join them. */
export function outputText(output: readonly unknown[]): string {
  let text = '';
  for (const item of output) {
    if (!isObject(item) || item.type !== 'message' || !Array.isArray(item.content)) continue;
    for (const part of item.content) {
      if (isObject(part) && part.type === 'output_text' && typeof part.text === 'string') text += part.text;
    }
  }
  return text;
}
