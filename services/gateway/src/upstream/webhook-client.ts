import { withTraceHeaders } from '@switchyard/core';
import { inspectCustomHost } from '@switchyard/rules';
import { errors, type Dispatcher } from 'undici';
import type { GuardrailWebhookClient, WebhookAnswer, WebhookCall } from '../domain/ports.ts';
import { NonPublicAddress } from '@switchyard/rules';

/** The most of a webhook's answer that is read: a verdict and its reason fit in far less. */
export const MAX_WEBHOOK_ANSWER_BYTES = 1024 * 1024;

export interface WebhookClientOptions {
  /** Connections to trusted hosts. */
  dispatcher: Dispatcher;
  /** Connections to every other host: they connect only to public addresses. */
  customHostDispatcher: Dispatcher;
  /** TRUSTED_CUSTOM_HOSTS: hosts (and their subdomains) reached whatever they resolve to. */
  trustedHosts: readonly string[];
}

/**
 * Calls guardrail webhooks. A tenant chose the URL, so it passes the unsafe-host check custom
 * hosts pass: http(s), no credentials, no metadata host, and a host outside TRUSTED_CUSTOM_HOSTS
 * is connected to only at public addresses (checked at each connection). Redirects are not
 * followed. The call gives up after its timeout, and an answer larger than 1 MiB is refused.
 * Errors say what went wrong without the headers, which may hold the webhook's credentials.
 */
export class WebhookClient implements GuardrailWebhookClient {
  constructor(private readonly options: WebhookClientOptions) {}

  async post(call: WebhookCall): Promise<WebhookAnswer> {
    const inspected = inspectCustomHost(call.url, this.options.trustedHosts);
    if (inspected.refused !== undefined) throw new Error(`the webhook URL is refused: ${inspected.refused}`);
    const { url } = inspected;
    const dispatcher = inspected.trusted ? this.options.dispatcher : this.options.customHostDispatcher;
    const signal = AbortSignal.timeout(call.timeoutMs);
    try {
      const response = await dispatcher.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        // With tracing on, the webhook is told the trace of the request it checks.
        headers: withTraceHeaders(call.headers),
        body: call.body,
        signal,
        headersTimeout: call.timeoutMs,
        bodyTimeout: call.timeoutMs,
      });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body) {
        size += (chunk as Buffer).length;
        if (size > MAX_WEBHOOK_ANSWER_BYTES) {
          response.body.destroy();
          throw new Error(`the webhook answered more than ${MAX_WEBHOOK_ANSWER_BYTES} bytes`);
        }
        chunks.push(chunk as Buffer);
      }
      return { status: response.statusCode, body: Buffer.concat(chunks).toString('utf8') };
    } catch (error) {
      const timedOut =
        signal.aborted ||
        error instanceof errors.HeadersTimeoutError ||
        error instanceof errors.BodyTimeoutError;
      if (timedOut) throw new Error(`the webhook did not answer within ${call.timeoutMs} ms`);
      if (error instanceof NonPublicAddress) throw new Error(`the webhook URL is refused: ${error.message}`);
      const message = error instanceof Error ? error.message : String(error);
      if (message.startsWith('the webhook')) throw error;
      throw new Error(`the webhook could not be reached (${message})`);
    }
  }
}
