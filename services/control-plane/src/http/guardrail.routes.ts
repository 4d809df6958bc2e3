import { camelKeys, listBody } from '@switchyard/core';
import { jsonBody } from '@switchyard/http';
import { requirePrincipal } from '@switchyard/access';
import { parseGuardrailActions, parseGuardrailChecks } from '@switchyard/guardrails';
import { ScopedRouter } from '@switchyard/runtime';
import type { GuardrailService } from '../domain/guardrail.service.ts';
import {
  createGuardrailBody,
  listGuardrailsQuery,
  updateGuardrailBody,
} from '../domain/guardrail.schemas.ts';
import {
  presentGuardrail,
  presentGuardrailSummary,
  presentGuardrailVersion,
} from './guardrail.presenters.ts';

/**
 * `/guardrails`, mounted under `/v1` behind API-key authentication: the definitions configs
 * name in `input_guardrails` and `output_guardrails`, which the gateways run.
 */
export function guardrailRouter(guardrails: GuardrailService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });

  router.post(
    '/',
    {
      scope: 'organisation_guardrails.create',
      summary: 'Defines a guardrail: the checks to run and what a failed check does.',
      query: 'none',
      body: createGuardrailBody,
    },
    async (req, res, _next, input) => {
      const body = input.body(req);
      const { guardrail, version } = await guardrails.create(requirePrincipal(req), {
        ...camelKeys(body),
        checks: parseGuardrailChecks(body.checks, 'checks'),
        actions: parseGuardrailActions(body.actions, 'actions'),
      });
      res.json({ id: guardrail.id, slug: guardrail.slug, version_id: version.id });
    },
  );
  router.get(
    '/',
    {
      scope: 'organisation_guardrails.list',
      summary: 'Lists the guardrails the key can see.',
      query: listGuardrailsQuery,
      page: true,
    },
    async (req, res, _next, input) => {
      const [found, total] = await guardrails.list(
        requirePrincipal(req),
        camelKeys(input.query(req)),
        input.page(req),
      );
      res.json(listBody(found.map(presentGuardrailSummary), total));
    },
  );
  router.get(
    '/:id',
    {
      scope: 'organisation_guardrails.read',
      summary: 'One guardrail, by id or slug, with its checks and actions.',
      query: 'none',
    },
    async (req, res) => {
      res.json(presentGuardrail(await guardrails.get(requirePrincipal(req), req.params.id)));
    },
  );
  router.put(
    '/:id',
    {
      scope: 'organisation_guardrails.update',
      summary: "Changes a guardrail's name, or saves a new version of its checks and actions.",
      query: 'none',
      body: updateGuardrailBody,
    },
    async (req, res, _next, input) => {
      const body = input.body(req);
      const { guardrail } = await guardrails.update(requirePrincipal(req), req.params.id, {
        name: body.name,
        checks: body.checks === undefined ? undefined : parseGuardrailChecks(body.checks, 'checks'),
        actions: body.actions === undefined ? undefined : parseGuardrailActions(body.actions, 'actions'),
        secretMappings: body.secret_mappings,
      });
      res.json({ id: guardrail.id, slug: guardrail.slug, version_id: guardrail.currentVersionId });
    },
  );
  router.delete(
    '/:id',
    {
      scope: 'organisation_guardrails.delete',
      summary: 'Archives a guardrail.',
      query: 'none',
      body: 'none',
    },
    async (req, res) => {
      await guardrails.archive(requirePrincipal(req), req.params.id);
      res.json({});
    },
  );
  router.get(
    '/:id/versions',
    {
      scope: 'organisation_guardrails.read',
      summary: "A guardrail's versions, newest first.",
      query: 'none',
      page: true,
    },
    async (req, res, _next, input) => {
      const { guardrail, versions, total } = await guardrails.listVersions(
        requirePrincipal(req),
        req.params.id,
        input.page(req),
      );
      res.json(
        listBody(
          versions.map((version) => presentGuardrailVersion(guardrail, version)),
          total,
        ),
      );
    },
  );

  return router;
}
