// The span of one call to a provider's model while tracing is on (see docs/tracing.md), as
// OpenTelemetry's GenAI conventions describe it: `chat {model}`, a client span whose
// `traceparent` the provider is sent (upstream/http-client.ts), ending when the answer has
// been read: a JSON answer at once, a stream when its last event has gone by.
import {
  AppError,
  failSpan,
  runInContext,
  SpanKind,
  startSpan,
  tracingEnabled,
  type Attributes,
  type Span,
} from '@switchyard/core';
import type { ChatBody, ProviderResponse } from '../providers/types.ts';
import { upstreamHeadersOf } from '../upstream/http-client.ts';

/** Provider ids that the conventions name otherwise (`gen_ai.provider.name`); the rest keep theirs. */
const CONVENTION_NAMES: Record<string, string> = {
  bedrock: 'aws.bedrock',
  'azure-openai': 'azure.ai.openai',
  google: 'gcp.gemini',
  'vertex-ai': 'gcp.vertex_ai',
  'mistral-ai': 'mistral_ai',
  'x-ai': 'x_ai',
  'perplexity-ai': 'perplexity',
};

/** What a chat answer tells of itself: its id, model, finish reasons and token usage. */
interface AnswerFields {
  id?: string;
  model?: string;
  finishReasons: string[];
  inputTokens?: number;
  outputTokens?: number;
}

function readAnswer(json: unknown, into: AnswerFields): void {
  if (!json || typeof json !== 'object') return;
  const answer = json as {
    id?: unknown;
    model?: unknown;
    choices?: unknown;
    usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } | null;
  };
  if (typeof answer.id === 'string' && into.id === undefined) into.id = answer.id;
  if (typeof answer.model === 'string' && into.model === undefined) into.model = answer.model;
  if (Array.isArray(answer.choices)) {
    for (const choice of answer.choices) {
      const reason = (choice as { finish_reason?: unknown } | null)?.finish_reason;
      if (typeof reason === 'string') into.finishReasons.push(reason);
    }
  }
  const usage = answer.usage;
  if (usage && typeof usage === 'object') {
    if (typeof usage.prompt_tokens === 'number') into.inputTokens = usage.prompt_tokens;
    if (typeof usage.completion_tokens === 'number') into.outputTokens = usage.completion_tokens;
  }
}

const LF = 0x0a;

/** Reads the `data: {...}` events of an OpenAI-format stream chunk by chunk, a line cut between chunks included. */
class StreamFields {
  readonly fields: AnswerFields = { finishReasons: [] };
  private carry: Buffer | undefined;

  push(chunk: Uint8Array): void {
    const bytes = Buffer.isBuffer(chunk)
      ? chunk
      : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const data = this.carry ? Buffer.concat([this.carry, bytes]) : bytes;
    this.carry = undefined;
    let start = 0;
    for (let end = data.indexOf(LF, start); end !== -1; end = data.indexOf(LF, start)) {
      this.line(data.toString('utf8', start, end));
      start = end + 1;
    }
    if (start < data.length) this.carry = Buffer.from(data.subarray(start));
  }

  private line(text: string): void {
    if (!text.startsWith('data:')) return;
    const json = text.slice(5).trim();
    if (!json.startsWith('{')) return;
    // Most chunks carry only text: they are read for the answer's id and model, then skipped.
    const known = this.fields.id !== undefined && this.fields.model !== undefined;
    if (known && !json.includes('"usage"') && !/"finish_reason":\s*"/.test(json)) return;
    try {
      readAnswer(JSON.parse(json), this.fields);
    } catch {
      // Not JSON: nothing to read.
    }
  }
}

/**
 * A failure as a span's `error.type`: the HTTP status of a provider's error answer, the error
 * code of another failure (a timeout, an unreachable host), or the error's class.
 */
function errorType(err: unknown): string {
  if (err instanceof AppError) {
    return upstreamHeadersOf(err) !== undefined ? String(err.status) : (err.code ?? String(err.status));
  }
  return err instanceof Error ? err.name : 'error';
}

/** One call to a provider's model, traced. */
class ModelSpan {
  constructor(private readonly span: Span) {}

  static start(
    provider: string,
    body: ChatBody,
  ): { span: ModelSpan; context: ReturnType<typeof startSpan>['context'] } {
    const model = typeof body.model === 'string' ? body.model : '';
    const attributes: Attributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': CONVENTION_NAMES[provider] ?? provider,
      'gen_ai.request.model': model,
    };
    const maxTokens = body.max_completion_tokens ?? body.max_tokens;
    if (typeof maxTokens === 'number') attributes['gen_ai.request.max_tokens'] = maxTokens;
    if (typeof body.temperature === 'number') attributes['gen_ai.request.temperature'] = body.temperature;
    if (typeof body.top_p === 'number') attributes['gen_ai.request.top_p'] = body.top_p;
    if (body.stream === true) attributes['gen_ai.request.stream'] = true;
    const started = startSpan(model ? `chat ${model}` : 'chat', SpanKind.CLIENT, attributes);
    return { span: new ModelSpan(started.span), context: started.context };
  }

  /** The provider's answer, passed on; the span ends once it has been read. */
  answered(response: ProviderResponse): ProviderResponse {
    if (response.status >= 400) {
      this.failed(response.status);
      return response;
    }
    if (response.kind === 'json') {
      const fields: AnswerFields = { finishReasons: [] };
      try {
        readAnswer(JSON.parse(response.body.toString('utf8')), fields);
      } catch {
        // Not JSON: the span has no answer fields.
      }
      this.end(fields);
      return response;
    }
    return { ...response, body: this.observe(response.body) };
  }

  /** The call failed before an answer, or answered with an error status. */
  failed(failure: unknown): void {
    const type = typeof failure === 'number' ? String(failure) : errorType(failure);
    const status =
      typeof failure === 'number' ? failure : upstreamHeadersOf(failure) && (failure as AppError).status;
    if (status) this.span.setAttribute('http.response.status_code', status);
    failSpan(this.span, type);
    this.span.end();
  }

  private async *observe(body: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
    const reader = new StreamFields();
    let failure: unknown;
    try {
      for await (const chunk of body) {
        reader.push(chunk);
        yield chunk;
      }
    } catch (err) {
      failure = err;
      throw err;
    } finally {
      if (failure === undefined) this.end(reader.fields);
      else this.failed(failure);
    }
  }

  private end(fields: AnswerFields): void {
    const span = this.span;
    if (fields.id !== undefined) span.setAttribute('gen_ai.response.id', fields.id);
    if (fields.model !== undefined) span.setAttribute('gen_ai.response.model', fields.model);
    if (fields.finishReasons.length > 0)
      span.setAttribute('gen_ai.response.finish_reasons', fields.finishReasons);
    if (fields.inputTokens !== undefined) span.setAttribute('gen_ai.usage.input_tokens', fields.inputTokens);
    if (fields.outputTokens !== undefined)
      span.setAttribute('gen_ai.usage.output_tokens', fields.outputTokens);
    span.end();
  }
}

/**
 * Calls a provider's chat model under a model span while tracing is on (else just calls it):
 * the provider request carries the span's `traceparent`, and the span ends with the answer.
 */
export async function tracedChatCall(
  provider: string,
  body: ChatBody,
  call: () => Promise<ProviderResponse>,
): Promise<ProviderResponse> {
  if (!tracingEnabled()) return call();
  const { span, context } = ModelSpan.start(provider, body);
  let response: ProviderResponse;
  try {
    response = await runInContext(context, call);
  } catch (err) {
    span.failed(err);
    throw err;
  }
  return span.answered(response);
}
