import { headerNameProblem } from '@switchyard/core';
import { z } from 'zod';
import { secretMappingsSchema } from './secret-mapping.schemas.ts';

/*
 * The wire form of guardrail requests (snake_case, as the API spells them). What `checks` and
 * `actions` may hold is @switchyard/guardrails' to say (parseGuardrailChecks and
 * parseGuardrailActions, called by the routes): here they are only a list and an object.
 */

const guardrailName = z.string().trim().min(1).max(255);

const checks = z.array(z.unknown()).meta({
  description:
    'The checks to run: each an `id`, its `parameters`, and optionally a name, time budget and failure mode.',
});

const actions = z.record(z.string(), z.unknown()).meta({
  description: 'What a failed check does: `deny`, `async`, `redact`, and feedback on success or failure.',
});

/** `headers.<Header-Name>`: a header every webhook check of the guardrail sends, its value from a secret reference. */
const webhookHeaderTarget = z.string().superRefine((target, ctx) => {
  const name = /^headers\.(.+)$/.exec(target)?.[1];
  const problem =
    name === undefined ? "is not 'headers.<Header-Name>'" : headerNameProblem(name, undefined, true);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: `'${target}' ${problem}` });
});

const secretMappings = secretMappingsSchema(
  webhookHeaderTarget,
  '`headers.<Header-Name>`, a header sent by the guardrail’s `default.webhook` checks (it wins over an inline header of that name)',
);

/** A workspace id or slug; null or '' asks for an organisation-level guardrail (an organisation admin key's alone). */
const workspaceReference = z
  .string()
  .max(255)
  .nullable()
  .transform((value) => (value === '' ? null : value));

/** The caller's own organisation: naming it without a workspace asks for an organisation-level guardrail. */
const organisationReference = z.string().min(1).max(255);

export const createGuardrailBody = z.strictObject({
  name: guardrailName,
  workspace_id: workspaceReference.optional(),
  organisation_id: organisationReference.optional(),
  checks,
  actions,
  secret_mappings: secretMappings.optional(),
});

export const updateGuardrailBody = z
  .strictObject({
    name: guardrailName.optional(),
    checks: checks.optional(),
    actions: actions.optional(),
    secret_mappings: secretMappings.optional(),
  })
  .refine((body) => Object.values(body).some((value) => value !== undefined), {
    error: 'give at least one of name, checks, actions or secret_mappings',
  });

/** Page parameters are read by parsePage. */
export const listGuardrailsQuery = z.object({
  workspace_id: z.string().min(1).max(255).optional(),
  organisation_id: organisationReference.optional(),
});
