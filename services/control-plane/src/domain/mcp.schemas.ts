import { z } from 'zod';
import { secretMappingsSchema } from './secret-mapping.schemas.ts';
import {
  integrationDescription as description,
  integrationName as name,
  integrationSlug as slug,
  listIntegrationsQuery,
  workspaceAccessSwitches,
  workspaceReference,
} from './integration.schemas.ts';

/*
 * The wire form of the MCP integration, MCP server and MCP registry requests (snake_case, as
 * the API spells them). Unknown fields are refused (400) everywhere.
 */

const headerName = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'a valid HTTP header name');

const authType = z.enum(['none', 'headers', 'oauth_client_credentials', 'oauth_auto']).meta({
  description:
    '`none`; `headers`: `configurations.custom_headers` are sent upstream; `oauth_client_credentials`: a token fetched from `configurations.token_url` with the client credentials is sent. `oauth_auto` (per-user upstream OAuth) is not built: 501.',
});

const transport = z.enum(['http', 'sse']).meta({
  description: 'How the upstream is reached: `http` (streamable HTTP). `sse` is not built: 501.',
});

const configurations = z
  .strictObject({
    custom_headers: z.record(headerName, z.string().max(8192)).optional().meta({
      description:
        'Headers sent with every upstream request. Their values are secrets: stored encrypted and shown masked; send the mask back to keep a stored value.',
    }),
    passthrough_header: z
      .union([z.array(headerName).max(50), z.record(headerName, z.unknown())])
      .optional()
      .meta({
        description:
          "Headers copied from the client's request to the upstream: a list of names, or an object whose keys are the names.",
      }),
    token_url: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .optional()
      .meta({
        description: '`oauth_client_credentials`: the token endpoint.',
      }),
    client_id: z.string().min(1).max(512).optional(),
    client_secret: z.string().min(1).max(4096).optional().meta({
      description: '`oauth_client_credentials`: a secret, stored encrypted and shown masked.',
    }),
    scope: z.string().max(1024).optional(),
  })
  .meta({
    description: 'How the upstream is called: headers, passthrough headers and OAuth client credentials.',
  });

/** `custom_headers.<Name>`, `oauth_client_id` or `oauth_client_secret`. */
const mcpMappingTarget = z.string().superRefine((target, ctx) => {
  if (target === 'oauth_client_id' || target === 'oauth_client_secret') return;
  const name = /^custom_headers\.(.+)$/.exec(target)?.[1];
  if (name === undefined || !headerName.safeParse(name).success) {
    ctx.addIssue({
      code: 'custom',
      message: `'${target}' is not 'custom_headers.<Header-Name>', 'oauth_client_id' or 'oauth_client_secret'`,
    });
  }
});

const secretMappings = secretMappingsSchema(
  mcpMappingTarget,
  '`custom_headers.<Header-Name>` (sent upstream, wins over a custom header of that name), `oauth_client_id` and `oauth_client_secret` (`oauth_client_credentials`, win over configurations.client_id and client_secret)',
);

const url = z.string().min(1).max(2048).meta({
  description:
    "The upstream's streamable HTTP endpoint (http or https). Private, loopback and metadata addresses are refused unless the host is in TRUSTED_CUSTOM_HOSTS.",
});

export const createMcpIntegrationBody = z.strictObject({
  name,
  slug: slug
    .optional()
    .meta({ description: 'Unique in the organisation; generated from the name when absent.' }),
  description: description.optional(),
  url,
  auth_type: authType,
  transport,
  configurations: configurations.optional(),
  secret_mappings: secretMappings.optional(),
  workspace_id: workspaceReference.optional(),
  organisation_id: z.string().min(1).max(255).optional(),
});

export const updateMcpIntegrationBody = z
  .strictObject({
    name: name.optional(),
    description: description.optional(),
    url: url.optional(),
    auth_type: authType.optional(),
    transport: transport.optional(),
    configurations: configurations.optional(),
    secret_mappings: secretMappings.optional(),
  })
  .refine((body) => Object.values(body).some((value) => value !== undefined), {
    error: 'give at least one field to change',
  });

export const listMcpIntegrationsQuery = listIntegrationsQuery;

export const mcpIntegrationWorkspacesBody = z.strictObject({
  workspaces: z.array(z.strictObject({ id: z.string().min(1).max(255), enabled: z.boolean() })).max(1000),
  ...workspaceAccessSwitches,
});

export const capabilityType = z.enum(['tool', 'prompt', 'resource', 'resource_template']);

export const capabilitiesQuery = z.object({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  page_size: z.coerce.number().int().min(1).max(500).default(100),
  type: capabilityType.optional(),
});

export const capabilitiesBody = z.strictObject({
  capabilities: z
    .array(z.strictObject({ name: z.string().min(1).max(512), type: capabilityType, enabled: z.boolean() }))
    .min(1)
    .max(1000),
});

const guardrailList = z.array(z.string().min(1).max(255)).max(50);
const cost = z.number().min(0).max(1_000_000);
const access = z.enum(['allow', 'deny']);

const toolSetting = z.strictObject({
  name: z.string().min(1).max(512),
  cost: cost
    .optional()
    .meta({ description: "USD one call of this tool costs, instead of the server's default." }),
  input_guardrails: guardrailList
    .optional()
    .meta({ description: 'Run on its arguments, after the server-wide ones.' }),
  output_guardrails: guardrailList
    .optional()
    .meta({ description: 'Run on its results, after the server-wide ones.' }),
});

const governance = {
  default_tool_access: access.optional().meta({
    description:
      '`allow` (default): every tool not switched off may be called; `deny`: only tools switched on at this server (an allow-list).',
  }),
  input_guardrails: guardrailList.optional().meta({
    description:
      "Guardrails (ids or slugs, of the organisation or the server's workspace) run on every tool call's arguments.",
  }),
  output_guardrails: guardrailList.optional().meta({
    description:
      "Guardrails (ids or slugs, of the organisation or the server's workspace) run on every tool call's results.",
  }),
  default_tool_cost: cost.optional().meta({
    description: 'USD one tool call costs (default 0), counted in usage limits of type cost.',
  }),
  tool_settings: z.array(toolSetting).max(1000).optional().meta({
    description: "Per tool: its own cost and guardrails. Replaces the server's list.",
  }),
};

export const createMcpServerBody = z.strictObject({
  name,
  description: description.optional(),
  mcp_integration_id: z.string().min(1).max(255).meta({ description: 'The integration, by id or slug.' }),
  slug: slug
    .optional()
    .meta({ description: 'Unique in the organisation; generated from the name when absent.' }),
  workspace_id: z.string().min(1).max(255).optional().meta({
    description: "The server's workspace (id or slug): a workspace key's own unless given.",
  }),
  ...governance,
});

export const updateMcpServerBody = z
  .strictObject({ name: name.optional(), description: description.optional(), ...governance })
  .refine((body) => Object.values(body).some((value) => value !== undefined), {
    error: 'give at least one field to change',
  });

export const listMcpServersQuery = z.object({
  workspace_id: z.string().min(1).max(255).optional(),
  id: z.string().min(1).max(255).optional(),
  search: z.string().max(255).optional(),
});

export const userAccessQuery = z.object({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  page_size: z.coerce.number().int().min(1).max(500).default(100),
  search: z.string().max(255).optional(),
});

export const userAccessBody = z.strictObject({
  user_access: z
    .array(z.strictObject({ user_id: z.string().min(1).max(255), enabled: z.boolean() }))
    .max(1000)
    .optional()
    .meta({ description: 'Per user: merged into what is stored (a user not named keeps their setting).' }),
  default_user_access: access.optional().meta({
    description: 'What a user with no setting of their own may do.',
  }),
});

const toolNames = z.array(z.string().min(1).max(512)).max(1000);

export const keyAccessBody = z.strictObject({
  default_key_access: access.optional().meta({
    description: 'What an API key with no rule of its own may do: `allow` (default) or `deny`.',
  }),
  key_access: z
    .array(
      z.strictObject({
        api_key_id: z.string().min(1).max(255),
        enabled: z.boolean().meta({ description: 'False: the key may call nothing on the server.' }),
        allowed_tools: toolNames
          .optional()
          .meta({ description: 'Non-empty: the only tools the key may call.' }),
        denied_tools: toolNames.optional().meta({ description: 'Tools the key may not call.' }),
      }),
    )
    .max(1000)
    .optional()
    .meta({ description: "Per key (of the server's workspace): merged into what is stored, by key." }),
  replace: z.boolean().default(false).meta({ description: 'True: `key_access` replaces every stored rule.' }),
});

export const registryQuery = z.object({
  cursor: z.string().max(512).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(30),
  search: z.string().max(255).optional(),
});

export const connectionsQuery = z.object({
  user_id: z.string().max(255).optional(),
  workspace_id: z.string().max(255).optional(),
});
