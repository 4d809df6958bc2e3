import { BadRequest } from '@switchyard/core';
import type { OpenAiEndpoint } from '../openai/api.ts';
import type { ChatCall, ProviderTarget } from '../types.ts';

export const PROVIDER = 'azure-openai';
/** A GA version, used when the integration names none. */
export const DEFAULT_API_VERSION = '2024-10-21';

/** The resource endpoint: the integration's custom host, else `https://{resource_name}.openai.azure.com`. */
export function resourceUrl(target: ProviderTarget): string {
  if (target.baseUrl) return target.baseUrl.replace(/\/+$/, '').replace(/\/openai$/, '');
  const resource = target.settings.resource_name;
  if (!resource) {
    throw new BadRequest(
      'The azure-openai integration needs the resource_name setting (or a custom_host): it names the Azure endpoint.',
      { param: 'resource_name', code: 'provider_setting_missing' },
    );
  }
  return `https://${resource}.openai.azure.com`;
}

/**
 * The classic deployment path. The deployment picks the model, so the client's `model` only
 * names the deployment when the integration sets none.
 */
export function chatCompletionsUrl(call: ChatCall): string {
  const { settings } = call.target;
  const deployment = encodeURIComponent(settings.deployment || call.body.model);
  const apiVersion = encodeURIComponent(settings.api_version || DEFAULT_API_VERSION);
  return `${resourceUrl(call.target)}/openai/deployments/${deployment}/chat/completions?api-version=${apiVersion}`;
}

/** An Entra bearer token (provider_auth_type oauthClientCredentials or wif, or azure_auth_mode entra) in place of the `api-key`. */
export function headers(target: ProviderTarget): Record<string, string> {
  if (target.accessToken !== undefined) {
    const { 'api-key': _key, ...rest } = target.headers;
    return { ...rest, 'content-type': 'application/json', authorization: `Bearer ${target.accessToken}` };
  }
  return {
    ...target.headers,
    'content-type': 'application/json',
    ...(target.apiKey ? { 'api-key': target.apiKey } : {}),
  };
}

export const azureEndpoint: OpenAiEndpoint = { url: chatCompletionsUrl, headers };

/** The operations Azure serves under a deployment, which picks their model. */
const DEPLOYMENT_OPERATIONS = new Set([
  '/embeddings',
  '/completions',
  '/images/generations',
  '/audio/speech',
]);

/**
 * Where an OpenAI-format operation lives on Azure, with the integration's api-version added:
 * a deployment operation (embeddings, legacy completions, image generation, speech) under
 * `/openai/deployments/{deployment}`, anything else (files, batches, ...) under `/openai`.
 */
export function forwardUrl(target: ProviderTarget, path: string, model: string | undefined): string {
  const url = new URL(`http://azure${path}`);
  const apiVersion = target.settings.api_version || DEFAULT_API_VERSION;
  url.searchParams.set('api-version', apiVersion);
  const query = url.search;
  if (DEPLOYMENT_OPERATIONS.has(url.pathname)) {
    const deployment = target.settings.deployment || model;
    if (!deployment) {
      throw new BadRequest(`azure-openai: ${url.pathname.slice(1)} needs a model naming the deployment.`, {
        param: 'model',
        code: 'provider_setting_missing',
      });
    }
    return `${resourceUrl(target)}/openai/deployments/${encodeURIComponent(deployment)}${url.pathname}${query}`;
  }
  return `${resourceUrl(target)}/openai${url.pathname}${query}`;
}
