import { z } from 'zod';
import { headerNameProblem } from '@switchyard/core';
import {
  integrationDescription as description,
  integrationName as name,
  integrationSlug as slug,
  listIntegrationsQuery,
  workspaceAccessSwitches,
  workspaceReference,
} from './integration.schemas.ts';

/*
 * The wire form of the agent integration requests (snake_case, as the API spells them, except
 * where the reference spells fetch-agent-card's fields otherwise). Unknown fields are refused
 * (400) everywhere.
 */

/** A header a tenant may send to its agent: a valid name, not hop-by-hop, framing or a cookie (`authorization` may be). */
const headerName = z
  .string()
  .min(1)
  .max(256)
  .superRefine((name, ctx) => {
    const problem = headerNameProblem(name, undefined, true);
    if (problem) ctx.addIssue({ code: 'custom', message: `header '${name}' ${problem}` });
  });
const headerValue = z
  .string()
  .max(8192)
  .regex(/^[^\r\n\0]*$/, 'no line breaks or NUL');
const headers = z.record(headerName, headerValue).refine((h) => Object.keys(h).length <= 50, {
  error: 'at most 50 headers',
});

const authType = z.enum(['none', 'headers', 'oauth_auto', 'oauth_client_credentials']).meta({
  description:
    '`none`; `headers`: `configurations.custom_headers` are sent to the agent. `oauth_auto` and `oauth_client_credentials` are not built: 501.',
});

const configurations = z
  .strictObject({
    custom_headers: headers.optional().meta({
      description:
        'Headers sent with every request to the agent. Their values are secrets: stored encrypted and shown masked; send the mask back to keep a stored value.',
    }),
  })
  .meta({ description: 'How the agent is called.' });

const url = z.string().min(1).max(2048).meta({
  description:
    "The agent's endpoint (http or https). Private, reserved, loopback and metadata addresses, other schemes and URLs with a fragment are refused unless the host is in TRUSTED_CUSTOM_HOSTS.",
});

/** An agent card as given: an object, or (as the reference's update spells it) its JSON text. */
const agentCard = z.union([z.record(z.string(), z.unknown()), z.string().max(1_100_000)]).meta({
  description:
    'The agent card (A2A): a JSON object with a string `url` and `name`, at most 1 MB. Given, it is stored as is (not fetched).',
});

export const createAgentIntegrationBody = z.strictObject({
  name,
  slug: slug
    .optional()
    .meta({ description: 'Unique in the organisation; generated from the name when absent.' }),
  description: description.optional(),
  url,
  auth_type: authType,
  configurations: configurations.optional(),
  agent_card: agentCard.optional(),
  fetch_agent_card: z.boolean().optional().meta({
    description:
      'Fetch the agent card from the endpoint now (default: true unless `agent_card` is given). A card that cannot be fetched fails the create.',
  }),
  workspace_id: workspaceReference.optional(),
  organisation_id: z.string().min(1).max(255).optional(),
});

export const updateAgentIntegrationBody = z
  .strictObject({
    name: name.optional(),
    description: description.optional(),
    url: url.optional(),
    auth_type: authType.optional(),
    configurations: configurations.optional(),
    agent_card: agentCard.optional(),
    fetch_agent_card: z.boolean().optional().meta({
      description: 'True: fetch the agent card again from the (new) endpoint now.',
    }),
  })
  .refine((body) => Object.values(body).some((value) => value !== undefined), {
    error: 'give at least one field to change',
  });

export const listAgentIntegrationsQuery = listIntegrationsQuery;

export const agentIntegrationWorkspacesBody = z.strictObject({
  workspaces: z
    .array(
      z.union([
        z.strictObject({ id: z.string().min(1).max(255), enabled: z.boolean() }),
        z.string().min(1).max(255),
      ]),
    )
    .max(1000)
    .meta({
      description:
        'Per workspace (id or slug): `{id, enabled}`, or the id alone (enabled). Merged into what is stored.',
    }),
  ...workspaceAccessSwitches,
});

export const fetchAgentCardBody = z
  .strictObject({
    endpoint: url
      .optional()
      .meta({ description: "The agent's endpoint; its origin's well-known paths are tried." }),
    url: url.optional().meta({ description: 'The same as `endpoint`.' }),
    organisation_id: z.string().min(1).max(255).optional(),
    headers: headers
      .optional()
      .meta({ description: "Headers sent to the endpoint's origin (never logged)." }),
    authType: z.enum(['none', 'headers', 'oauth_auto', 'oauth_client_credentials']).optional().meta({
      description: '`headers`: send `authToken` in `authHeader`. The OAuth ones are not built: 501.',
    }),
    authHeader: headerName
      .optional()
      .meta({ description: 'With `authType` `headers`: default `Authorization`.' }),
    authToken: headerValue.optional(),
  })
  .refine((body) => (body.endpoint === undefined) !== (body.url === undefined), {
    error: 'give exactly one of `endpoint` and `url`',
    path: ['endpoint'],
  });
