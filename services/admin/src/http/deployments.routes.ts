import { z } from 'zod';
import { camelKeys, listBody } from '@switchyard/core';
import { jsonBody } from '@switchyard/http';
import { requirePrincipal } from '@switchyard/access';
import { ScopedRouter } from '@switchyard/runtime';
import type { DeploymentService, DeploymentView } from '../domain/deployment.service.ts';
import {
  createDeploymentBody,
  deploymentRef,
  listDeploymentsQuery,
  updateDeploymentBody,
} from '../domain/deployment.schemas.ts';
import { presentDeployment } from './deployments.presenters.ts';

const deploymentPath = z.object({ deploymentId: deploymentRef });

/**
 * The organisation's gateway deployments. Bodies hold the credentials' password: it is stored
 * encrypted and only ever answered masked.
 */
export function deploymentsRouter(deployments: DeploymentService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });
  const present = (view: DeploymentView) =>
    presentDeployment(
      view,
      deployments.connectionStatus(view.instances),
      deployments.maskedCredentials(view.deployment),
    );
  router.get(
    '/',
    {
      scope: 'deployments.list',
      summary: "The organisation's deployments, oldest first; archived ones only with status=archived.",
      query: listDeploymentsQuery,
      page: true,
    },
    async (req, res, _next, input) => {
      const { status, type } = input.query(req);
      const [list, total] = await deployments.list(requirePrincipal(req), { status, type }, input.page(req));
      res.json(listBody(list.map(present), total));
    },
  );
  router.post(
    '/',
    {
      scope: 'deployments.create',
      summary:
        'Adds a gateway deployment: its type, authentication settings, workspaces and credentials (the password encrypted).',
      description:
        "is_default 1 makes it the organisation's default deployment and the previous default no longer one. Each of `workspaces` must be a workspace of the organisation under its own slug.",
      query: 'none',
      body: createDeploymentBody,
    },
    async (req, res, _next, input) => {
      res.json(present(await deployments.create(requirePrincipal(req), camelKeys(input.body(req)))));
    },
  );
  router.get(
    '/:deploymentId',
    {
      scope: 'deployments.read',
      summary: 'One deployment, by id (archived ones too) or slug, its credentials masked.',
      params: deploymentPath,
      query: 'none',
    },
    async (req, res, _next, input) => {
      res.json(present(await deployments.get(requirePrincipal(req), input.param(req, 'deploymentId'))));
    },
  );
  router.get(
    '/:deploymentId/ping',
    {
      scope: 'deployments.read',
      summary:
        "Whether the deployment's gateways report: healthy (a heartbeat within 90 s), unhealthy (within 15 minutes) or unknown.",
      params: deploymentPath,
      query: 'none',
    },
    async (req, res, _next, input) => {
      const view = await deployments.get(requirePrincipal(req), input.param(req, 'deploymentId'));
      const { connection_status, last_synced_at } = present(view);
      res.json({ id: view.deployment.id, connection_status, last_synced_at });
    },
  );
  router.put(
    '/:deploymentId',
    {
      scope: 'deployments.update',
      summary: 'Changes the fields given of a live deployment and keeps the others.',
      description:
        '`auth_settings` given replaces the settings it names; `credentials` replace the stored ones (null removes them). `status` may only be `active`: delete archives.',
      params: deploymentPath,
      query: 'none',
      body: updateDeploymentBody,
    },
    async (req, res, _next, input) => {
      const ref = input.param(req, 'deploymentId');
      res.json(present(await deployments.update(requirePrincipal(req), ref, camelKeys(input.body(req)))));
    },
  );
  router.delete(
    '/:deploymentId',
    {
      scope: 'deployments.delete',
      summary: 'Archives a deployment: its status becomes archived and its gateways are refused.',
      params: deploymentPath,
      query: 'none',
      body: 'none',
    },
    async (req, res, _next, input) => {
      await deployments.delete(requirePrincipal(req), input.param(req, 'deploymentId'));
      res.json({});
    },
  );
  return router;
}
