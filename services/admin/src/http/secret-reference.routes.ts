import { z } from 'zod';
import { camelKeys, listBody, parseInput, BadRequest } from '@switchyard/core';
import { jsonBody } from '@switchyard/http';
import { requirePrincipal } from '@switchyard/access';
import { ScopedRouter } from '@switchyard/runtime';
import type { SecretReferenceService } from '../domain/secret-reference.service.ts';
import type { SecretReference } from '../store/entities.ts';
import {
  createSecretReferenceBody,
  listSecretReferencesQuery,
  secretReferenceRef,
  tagsFilter,
  updateSecretReferenceBody,
} from '../domain/secret-reference.schemas.ts';
import { presentSecretReference, presentSecretReferenceListItem } from './secret-reference.presenters.ts';

const referencePath = z.object({ secretReferenceId: secretReferenceRef });

/** The `tags` query parameter: a JSON object of strings. */
function parseTags(raw: string | undefined): Record<string, string> | undefined {
  if (raw === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new BadRequest("Query parameter 'tags' must be a JSON object of strings.", { param: 'tags' });
  }
  return parseInput(tagsFilter, value, 'query', 'tags');
}

/**
 * The organisation's secret references. Bodies hold manager credentials: they are stored
 * encrypted and only ever answered masked.
 */
export function secretReferencesRouter(references: SecretReferenceService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });
  const present = (reference: SecretReference) =>
    presentSecretReference(reference, {
      authConfig: references.maskedAuthConfig(reference),
      value: references.maskedValue(reference),
    });
  router.get(
    '/',
    {
      scope: 'secret_references.list',
      summary: "The organisation's secret references, oldest first, filtered by manager, tags or name.",
      query: listSecretReferencesQuery,
      page: true,
    },
    async (req, res, _next, input) => {
      const query = input.query(req);
      const [list, total] = await references.list(
        requirePrincipal(req),
        { managerType: query.manager_type, tags: parseTags(query.tags), search: query.search },
        input.page(req),
      );
      res.json(listBody(list.map(presentSecretReferenceListItem), total));
    },
  );
  router.post(
    '/',
    {
      scope: 'secret_references.create',
      summary:
        'Adds a secret reference: kept by Switchyard itself (internal, with secret_value) or by a manager (aws_sm, hashicorp_vault, azure_kv, with its auth config and secret path), the secret key, and the workspaces that may use it.',
      description:
        "secret_uri (internal://<slug>, aws-sm://<region>/<name or ARN>, azure-kv://<vault host>/<name>, vault://<mount>/<path>) may replace manager_type and secret_path; given with them, they must agree. secret_value (a string, or an object of strings, numbers and booleans, at most 64 KB) is stored encrypted and answered only masked. allow_all_workspaces true and allowed_workspaces are exclusive. Auth kinds that need the host's own cloud identity (AWS assumedRole and serviceRole, Azure managed and default, Vault kubernetes) are answered 501. Manager addresses pass the unsafe-host check.",
      query: 'none',
      body: createSecretReferenceBody,
    },
    async (req, res, _next, input) => {
      const reference = await references.create(requirePrincipal(req), camelKeys(input.body(req)));
      res.json({ id: reference.id, slug: reference.slug, object: 'secret-reference' });
    },
  );
  router.get(
    '/:secretReferenceId',
    {
      scope: 'secret_references.read',
      summary: 'One secret reference, by id or slug, the secrets of its auth config masked.',
      params: referencePath,
      query: 'none',
    },
    async (req, res, _next, input) => {
      res.json(present(await references.get(requirePrincipal(req), input.param(req, 'secretReferenceId'))));
    },
  );
  router.put(
    '/:secretReferenceId',
    {
      scope: 'secret_references.update',
      summary: 'Changes the fields given of a secret reference and keeps the others.',
      description:
        '`secret_value` (internal references) rotates the secret: integrations, guardrail webhooks and MCP integrations that map it take the new value from then on. `auth_config` given is merged with the stored one (null removes a field) unless it names another auth kind. `allowed_workspaces` replaces the list and sets allow_all_workspaces false; allow_all_workspaces true clears it.',
      params: referencePath,
      query: 'none',
      body: updateSecretReferenceBody,
    },
    async (req, res, _next, input) => {
      const ref = input.param(req, 'secretReferenceId');
      res.json(present(await references.update(requirePrincipal(req), ref, camelKeys(input.body(req)))));
    },
  );
  router.delete(
    '/:secretReferenceId',
    {
      scope: 'secret_references.delete',
      summary: 'Deletes a secret reference; refused (409) while integrations map it.',
      params: referencePath,
      query: 'none',
      body: 'none',
    },
    async (req, res, _next, input) => {
      await references.delete(requirePrincipal(req), input.param(req, 'secretReferenceId'));
      res.json({});
    },
  );
  return router;
}
