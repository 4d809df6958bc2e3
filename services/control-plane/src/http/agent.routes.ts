import { NotImplemented, listBody } from '@switchyard/core';
import { jsonBody } from '@switchyard/http';
import { z } from 'zod';
import { requirePrincipal } from '@switchyard/access';
import { ScopedRouter } from '@switchyard/runtime';
import { skillsOf, type AgentIntegrationService } from '../domain/agent-integration.service.ts';
import {
  agentIntegrationWorkspacesBody,
  createAgentIntegrationBody,
  fetchAgentCardBody,
  listAgentIntegrationsQuery,
  updateAgentIntegrationBody,
} from '../domain/agent.schemas.ts';
import { presentAgentIntegration, presentAgentSkill } from './agent.presenters.ts';

const withMore = <T>(data: T[], total: number, offset: number) => ({
  ...listBody(data, total),
  has_more: offset + data.length < total,
});

/**
 * `/agent-integrations`, mounted under `/v2`: upstream agents (A2A), how to call them and their
 * agent cards. Agent servers and invoking agents through the gateway are not built.
 */
export function agentIntegrationRouter(
  integrations: AgentIntegrationService,
  bodyLimit: string,
): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });

  // Before `/:id`: a literal path, not an integration's id.
  router.post(
    '/fetch-agent-card',
    {
      scope: 'agent_integrations.create',
      summary:
        "Fetches an agent card from an agent's endpoint, storing nothing: the unsafe-host check (at save and on connect, every redirect too), only `/.well-known/agent-card.json` then `/.well-known/agent.json`, a JSON object with `url` and `name`, at most 1 MB, bounded timeouts.",
      query: 'none',
      body: fetchAgentCardBody,
    },
    async (req, res, _next, input) => {
      const fetched = await integrations.fetchCard(requirePrincipal(req), input.body(req));
      res.json({ agent_card: fetched.agentCard, url_fetched: fetched.urlFetched });
    },
  );
  router.post(
    '/',
    {
      scope: 'agent_integrations.create',
      summary:
        "Adds an agent integration: the agent's endpoint, its credentials and its agent card (given, or fetched now unless `fetch_agent_card` is false).",
      query: 'none',
      body: createAgentIntegrationBody,
    },
    async (req, res, _next, input) => {
      const created = await integrations.create(requirePrincipal(req), input.body(req));
      res.json({ id: created.id, slug: created.slug });
    },
  );
  router.get(
    '/',
    {
      scope: 'agent_integrations.list',
      summary:
        "Lists the agent integrations the key can see: a workspace key its workspace's and the organisation's enabled for it.",
      query: listAgentIntegrationsQuery,
      page: true,
    },
    async (req, res, _next, input) => {
      const page = input.page(req);
      const [found, total] = await integrations.list(requirePrincipal(req), input.query(req), page);
      res.json(withMore(found.map(presentAgentIntegration), total, page.offset));
    },
  );
  router.get(
    '/:id',
    {
      scope: 'agent_integrations.read',
      summary: 'One agent integration, by id or slug, its credentials masked.',
      query: 'none',
    },
    async (req, res) => {
      res.json(presentAgentIntegration(await integrations.get(requirePrincipal(req), req.params.id)));
    },
  );
  router.put(
    '/:id',
    {
      scope: 'agent_integrations.update',
      summary:
        'Changes an agent integration; a masked credential sent back keeps its stored value; `fetch_agent_card: true` fetches the card again.',
      query: 'none',
      body: updateAgentIntegrationBody,
    },
    async (req, res, _next, input) => {
      const updated = await integrations.update(requirePrincipal(req), req.params.id, input.body(req));
      res.json({ id: updated.id, slug: updated.slug });
    },
  );
  router.delete(
    '/:id',
    {
      scope: 'agent_integrations.delete',
      summary: 'Deletes an agent integration.',
      query: 'none',
      body: 'none',
    },
    async (req, res) => {
      await integrations.delete(requirePrincipal(req), req.params.id);
      res.json({});
    },
  );
  router.get(
    '/:id/workspaces',
    {
      scope: 'agent_integrations.read',
      summary: 'Which workspaces may use an organisation-level agent integration.',
      query: 'none',
    },
    async (req, res) => {
      const { integration, workspaces } = await integrations.workspaceAccess(
        requirePrincipal(req),
        req.params.id,
      );
      res.json({
        data: workspaces.map((w) => ({
          id: w.workspaceId,
          enabled: w.enabled,
          status: 'active',
          created_at: w.createdAt.toISOString(),
          last_updated_at: w.updatedAt.toISOString(),
        })),
        global_workspace_access:
          integration.workspaceId === null ? { enabled: integration.globalWorkspaceAccess } : null,
        total: workspaces.length,
      });
    },
  );
  router.put(
    '/:id/workspaces',
    {
      scope: 'agent_integrations.update',
      summary:
        'Enables or disables an organisation-level agent integration per workspace, or for all of them.',
      query: 'none',
      body: agentIntegrationWorkspacesBody,
    },
    async (req, res, _next, input) => {
      await integrations.setWorkspaceAccess(requirePrincipal(req), req.params.id, input.body(req));
      res.json({});
    },
  );
  router.get(
    '/:id/skills',
    {
      scope: 'agent_integrations.read',
      summary: "The skills of the integration's stored agent card.",
      query: 'none',
    },
    async (req, res) => {
      const integration = await integrations.get(requirePrincipal(req), req.params.id);
      const skills = skillsOf(integration.agentCard).map(presentAgentSkill);
      res.json({ data: skills, total: skills.length });
    },
  );
  router.put(
    '/:id/skills',
    {
      scope: 'agent_integrations.update',
      summary: 'Not built: switching skills of an agent integration on or off (501).',
      query: 'none',
      body: z.strictObject({ skills: z.array(z.string().max(512)).max(1000) }),
    },
    async (req) => {
      await integrations.get(requirePrincipal(req), req.params.id);
      throw new NotImplemented(
        'Switching the skills of an agent integration is not built yet: GET lists the skills of its agent card.',
      );
    },
  );
  return router;
}
