import { z } from 'zod';

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
});

export const updateGuardrailBody = z
  .strictObject({
    name: guardrailName.optional(),
    checks: checks.optional(),
    actions: actions.optional(),
  })
  .refine((body) => Object.values(body).some((value) => value !== undefined), {
    error: 'give at least one of name, checks or actions',
  });

/** Page parameters are read by parsePage. */
export const listGuardrailsQuery = z.object({
  workspace_id: z.string().min(1).max(255).optional(),
  organisation_id: organisationReference.optional(),
});
