import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { BadRequest, UpstreamError } from '@switchyard/core';
import type { Dispatcher } from 'undici';
import type { ProviderTarget } from '../types.ts';
import { withUpstreamHeaders } from '../../upstream/http-client.ts';

export const PROVIDER = 'bedrock';

function missingSetting(name: string, why: string): BadRequest {
  return new BadRequest(`The bedrock integration needs the ${name} setting: ${why}`, {
    param: name,
    code: 'provider_setting_missing',
  });
}

export function bedrockBaseUrl(target: ProviderTarget): string {
  if (target.baseUrl) return target.baseUrl.replace(/\/+$/, '');
  const region = target.settings.aws_region;
  if (!region) throw missingSetting('aws_region', 'it names the Bedrock Runtime endpoint.');
  return `https://bedrock-runtime.${region}.amazonaws.com`;
}

/** `POST /model/{modelId}/converse` or `/converse-stream`; the model id (or ARN) is one URL-encoded segment. */
export function converseUrl(target: ProviderTarget, modelId: string, stream: boolean): URL {
  return new URL(
    `${bedrockBaseUrl(target)}/model/${encodeURIComponent(modelId)}/${stream ? 'converse-stream' : 'converse'}`,
  );
}

/**
 * The request headers, authenticated with SigV4 (service `bedrock`) from the integration's AWS
 * credentials, or with a Bedrock API key as a bearer token when it has no AWS credentials.
 */
export async function signedHeaders(
  target: ProviderTarget,
  url: URL,
  body: string,
  signingDate = new Date(),
): Promise<Record<string, string>> {
  const headers: Record<string, string> = {
    ...target.headers,
    host: url.host,
    'content-type': 'application/json',
  };
  const { aws_access_key_id: accessKeyId, aws_secret_access_key: secretAccessKey } = target.settings;
  if (!accessKeyId || !secretAccessKey) {
    if (target.apiKey) return { ...headers, authorization: `Bearer ${target.apiKey}` };
    throw missingSetting(
      accessKeyId ? 'aws_secret_access_key' : 'aws_access_key_id',
      'requests to Bedrock are signed with AWS credentials (or give the integration a Bedrock API key).',
    );
  }
  const region = target.settings.aws_region;
  if (!region) throw missingSetting('aws_region', 'AWS signatures are scoped to a region.');
  const sessionToken = target.settings.aws_session_token;
  const signer = new SignatureV4({
    service: 'bedrock',
    region,
    credentials: { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) },
    sha256: Sha256,
    applyChecksum: false,
  });
  const signed = await signer.sign(
    {
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      path: url.pathname,
      query: {},
      headers,
      body,
    },
    { signingDate },
  );
  return signed.headers;
}

/** restJson1 errors: `{message}` with the type in `x-amzn-ErrorType` (`Type:uri`) or in the body. */
export async function bedrockErrorFrom(response: Dispatcher.ResponseData): Promise<UpstreamError> {
  const status = response.statusCode;
  const text = Buffer.from(await response.body.arrayBuffer())
    .toString('utf8')
    .slice(0, 2_000);
  let message = text || `HTTP ${status}`;
  let type = String(response.headers['x-amzn-errortype'] ?? '').split(':')[0] || undefined;
  try {
    const parsed = JSON.parse(text) as { message?: string; Message?: string; __type?: string; code?: string };
    message = parsed.message ?? parsed.Message ?? message;
    type ??= (parsed.__type ?? parsed.code)?.split('#').pop();
  } catch {
    // Not JSON: keep the text.
  }
  const retryAfter = response.headers['retry-after'];
  const error = new UpstreamError(status, `bedrock error: ${message}`, {
    code: type ?? 'upstream_error',
    headers:
      typeof retryAfter === 'string' && /^[\w ,:-]{1,64}$/.test(retryAfter)
        ? { 'retry-after': retryAfter }
        : {},
  });
  return withUpstreamHeaders(error, response.headers);
}
