import type { ChatCompletionRequest } from '../http/chat-request.schema.ts';
import type { Readable } from 'node:stream';
import type { PricingMultiplier } from '../pricing/cost.ts';
import type { CancelSignal } from '../routing/cancellation.ts';

/** Where one request goes: the provider kind and the credentials to use there. */
export interface ProviderTarget {
  provider: string;
  apiKey: string;
  /** Overrides the provider's default base URL (e.g. an OpenAI-compatible host). */
  baseUrl?: string;
  /**
   * Set when baseUrl is a custom host outside TRUSTED_CUSTOM_HOSTS: the parameter that chose
   * it. Connections to it reach only public addresses, and a refusal names this parameter.
   */
  untrustedHostParam?: string | undefined;
  headers: Record<string, string>;
  /** Provider-specific settings (api_version, deployment, aws_region, aws_access_key_id, ...). */
  settings: Record<string, string>;
  integrationSlug?: string;
  /** The saved integration's id: the provider tokens fetched for it are kept by it. */
  integrationId?: string | undefined;
  /** A bearer token fetched for this request, sent in place of the key (provider_auth_type oauthClientCredentials or wif). */
  accessToken?: string;
  /** The integration's pricing_adjustments.multiplier, for cost tracking. */
  pricing?: PricingMultiplier | undefined;
}

export interface ChatCall {
  /** The parsed request body (already with the upstream model name). */
  body: ChatBody;
  /** The client's bytes, when they can be forwarded unchanged. */
  rawBody: Buffer | undefined;
  target: ProviderTarget;
  signal: CancelSignal;
  timeoutMs: number;
}

/** A validated chat completion request; unknown fields the client sent are kept. */
export type ChatBody = ChatCompletionRequest;

/** The head of the provider's answer as received (lower-case names), for http/provider-headers.ts to pick from. */
export type UpstreamHeaders = Record<string, string | string[] | undefined>;

export type ProviderResponse = (
  | { kind: 'json'; status: number; body: Buffer; contentType: string }
  | { kind: 'stream'; status: number; body: AsyncIterable<Uint8Array> | Readable; contentType: string }
) & { upstreamHeaders?: UpstreamHeaders | undefined };

/** Any other OpenAI-format operation (embeddings, files, runs, ...), forwarded as it came. */
export interface ForwardCall {
  method: string;
  /** The path after `/v1`, with its query string, e.g. `/files/file-1/content`. */
  path: string;
  /** Content headers of the client's request (content-type, accept, ...). */
  headers: Record<string, string>;
  body: Buffer | Readable | undefined;
  /** The model the operation was routed with, when it names one. */
  model?: string | undefined;
  target: ProviderTarget;
  signal: CancelSignal;
  timeoutMs: number;
}

export interface ForwardResponse {
  status: number;
  /** The content headers passed on as they are (content-type, content-disposition, ...). */
  headers: Record<string, string>;
  body: AsyncIterable<Uint8Array>;
  upstreamHeaders?: UpstreamHeaders | undefined;
}

/** An Anthropic Messages request (`POST /v1/messages`) passed through as the client wrote it. */
export interface MessagesCall {
  /** The request's JSON, with the target's model in it. */
  body: Buffer;
  /** The client's `anthropic-version` and `anthropic-beta`, when it sent them. */
  version: string | undefined;
  beta: string | undefined;
  target: ProviderTarget;
  signal: CancelSignal;
  timeoutMs: number;
}

/** A provider adapter: one folder under providers/. */
export interface ChatProvider {
  readonly id: string;
  chatCompletions(call: ChatCall): Promise<ProviderResponse>;
  /** Present on providers that speak the OpenAI format for every operation. */
  forward?(call: ForwardCall): Promise<ForwardResponse>;
  /**
   * Present on providers that serve Anthropic's Messages API: the request goes as it came and
   * the answer, a failure included, comes back as the provider gave it.
   */
  messages?(call: MessagesCall): Promise<ForwardResponse>;
}
