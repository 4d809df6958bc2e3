import { Gone, listBody } from '@switchyard/core';
import { jsonBody } from '@switchyard/http';
import { requirePrincipal } from '@switchyard/access';
import { ScopedRouter } from '@switchyard/runtime';
import { parseVersion, splitVersionSuffix, type PromptService } from '../domain/prompt.service.ts';
import {
  createPartialBody,
  createPromptBody,
  forkBody,
  getPromptQuery,
  listPromptsQuery,
  makeDefaultBody,
  renderBody,
  replaceSharesBody,
  shareBody,
  updatePartialBody,
  updatePromptBody,
  updateVersionBody,
} from '../domain/prompt.schemas.ts';
import type { PromptKind } from '../store/prompt.repository.ts';
import { presentPrompt, presentPromptSummary, presentShares, presentVersion } from './prompt.presenters.ts';

const withMore = <T>(data: T[], total: number, offset: number) => ({
  ...listBody(data, total),
  has_more: offset + data.length < total,
});

/** The routes prompts and partials share: CRUD, versions, the default version, sharing and forks. */
function promptRoutes(router: ScopedRouter, prompts: PromptService, kind: PromptKind): ScopedRouter {
  const noun = kind === 'prompt' ? 'prompt' : 'prompt partial';
  const created = (id: string, slug: string, versionId: string) => ({
    id,
    slug,
    version_id: versionId,
    object: kind,
  });

  router.post(
    '/',
    {
      scope: 'prompts.create',
      summary: `Creates a ${noun} in a workspace (a workspace key's own, or \`workspace_id\`), as its version 1.`,
      query: 'none',
      body: kind === 'prompt' ? createPromptBody : createPartialBody,
    },
    async (req, res, _next, input) => {
      const { prompt, version } = await prompts.create(requirePrincipal(req), kind, input.body(req));
      res.json(created(prompt.id, prompt.slug, version.id));
    },
  );
  router.get(
    '/',
    {
      scope: 'prompts.list',
      summary: `Lists the ${noun}s of a workspace (a workspace key's own, or \`workspace_id\`), or with \`type=shared\` those other workspaces share with it.`,
      query: listPromptsQuery,
      page: true,
    },
    async (req, res, _next, input) => {
      const page = input.page(req);
      const principal = requirePrincipal(req);
      const query = input.query(req);
      const found = await prompts.list(principal, kind, query, page);
      res.json(
        withMore(
          found.data.map((prompt) =>
            presentPromptSummary(
              prompt,
              query.show_prompt_share
                ? {
                    sharedWith: found.shares.get(prompt.id) ?? [],
                    ownerSlug: found.slugs.get(prompt.workspaceId),
                    callerWorkspaceId: found.workspaceId,
                  }
                : undefined,
            ),
          ),
          found.total,
          page.offset,
        ),
      );
    },
  );
  router.get(
    '/:id',
    {
      scope: 'prompts.read',
      summary: `One ${noun}, by id or slug, with its default version's content (\`version\`: another).`,
      query: getPromptQuery,
    },
    async (req, res, _next, input) => {
      const { version } = input.query(req);
      const found = await prompts.withVersion(
        requirePrincipal(req),
        kind,
        req.params.id,
        parseVersion(version),
      );
      res.json(presentPrompt(found.prompt, found.version));
    },
  );
  router.put(
    '/:id',
    {
      scope: 'prompts.update',
      summary: `Renames a ${noun}, or changes its content as a new version (fields not given are the default version's). The default version stays until makeDefault.`,
      query: 'none',
      body: kind === 'prompt' ? updatePromptBody : updatePartialBody,
    },
    async (req, res, _next, input) => {
      const { prompt, version } = await prompts.update(
        requirePrincipal(req),
        kind,
        req.params.id,
        input.body(req),
      );
      res.json(
        kind === 'prompt'
          ? { id: prompt.id, slug: prompt.slug, prompt_version_id: version?.id ?? null }
          : { id: prompt.id, slug: prompt.slug, prompt_partial_version_id: version?.id ?? null },
      );
    },
  );
  router.delete(
    '/:id',
    {
      scope: 'prompts.delete',
      summary:
        kind === 'prompt'
          ? 'Archives a prompt; 409 while it is shared with other workspaces (unshare first).'
          : 'Archives a partial; 409 while it is shared, or included by a live prompt or partial.',
      query: 'none',
      body: 'none',
    },
    async (req, res) => {
      await prompts.delete(requirePrincipal(req), kind, req.params.id);
      res.json({});
    },
  );
  router.get(
    '/:id/versions',
    { scope: 'prompts.read', summary: `Every version of a ${noun}, newest first.`, query: 'none' },
    async (req, res) => {
      const { prompt, versions } = await prompts.versions(requirePrincipal(req), kind, req.params.id);
      res.json(versions.map((version) => presentVersion(prompt, version)));
    },
  );
  router.get(
    '/:id/versions/:versionId',
    { scope: 'prompts.read', summary: `One version of a ${noun}, by number or id.`, query: 'none' },
    async (req, res) => {
      const ref = /^[1-9][0-9]{0,8}$/.test(req.params.versionId)
        ? Number(req.params.versionId)
        : req.params.versionId;
      const found = await prompts.withVersion(requirePrincipal(req), kind, req.params.id, ref);
      res.json(presentPrompt(found.prompt, found.version));
    },
  );
  router.put(
    '/:id/versions/:versionId',
    {
      scope: 'prompts.update',
      summary: "Sets a version's label or description; its content never changes.",
      query: 'none',
      body: updateVersionBody,
    },
    async (req, res, _next, input) => {
      await prompts.updateVersion(
        requirePrincipal(req),
        kind,
        req.params.id,
        req.params.versionId,
        input.body(req),
      );
      res.json({});
    },
  );
  router.put(
    '/:id/makeDefault',
    {
      scope: 'prompts.update',
      summary: `Makes a version (by number) the one that runs unless a caller names another.`,
      query: 'none',
      body: makeDefaultBody,
    },
    async (req, res, _next, input) => {
      await prompts.makeDefault(requirePrincipal(req), kind, req.params.id, input.body(req).version);
      res.json({});
    },
  );
  router.post(
    '/:id/share',
    {
      scope: 'prompts.update',
      summary: `Shares a ${noun} with more workspaces of the organisation (ids or slugs): they may read, list, render and run it.`,
      query: 'none',
      body: shareBody,
    },
    async (req, res, _next, input) => {
      const principal = requirePrincipal(req);
      const shares = await prompts.changeShares(principal, kind, req.params.id, {
        add: input.body(req).workspace_ids,
      });
      res.json(presentShares(await prompts.get(principal, kind, req.params.id), shares));
    },
  );
  router.put(
    '/:id/share',
    {
      scope: 'prompts.update',
      summary: `Replaces the workspaces a ${noun} is shared with.`,
      query: 'none',
      body: replaceSharesBody,
    },
    async (req, res, _next, input) => {
      const principal = requirePrincipal(req);
      const shares = await prompts.changeShares(principal, kind, req.params.id, {
        add: input.body(req).workspace_ids,
        replace: true,
      });
      res.json(presentShares(await prompts.get(principal, kind, req.params.id), shares));
    },
  );
  router.delete(
    '/:id/share',
    {
      scope: 'prompts.update',
      summary: `Shares a ${noun} with no workspace any more.`,
      query: 'none',
      body: 'none',
    },
    async (req, res) => {
      const principal = requirePrincipal(req);
      const shares = await prompts.changeShares(principal, kind, req.params.id, { replace: true });
      res.json(presentShares(await prompts.get(principal, kind, req.params.id), shares));
    },
  );
  router.post(
    '/:id/unshare',
    {
      scope: 'prompts.update',
      summary: `Stops sharing a ${noun} with the workspaces named.`,
      query: 'none',
      body: shareBody,
    },
    async (req, res, _next, input) => {
      const principal = requirePrincipal(req);
      const shares = await prompts.changeShares(principal, kind, req.params.id, {
        remove: input.body(req).workspace_ids,
      });
      res.json(presentShares(await prompts.get(principal, kind, req.params.id), shares));
    },
  );
  router.post(
    '/:id/fork',
    {
      scope: 'prompts.create',
      summary: `Copies a ${noun}'s default version, as version 1 of an independent ${noun}, into another workspace (a workspace key: its own, from a ${noun} shared with it).`,
      query: 'none',
      body: forkBody,
    },
    async (req, res, _next, input) => {
      const { prompt, version } = await prompts.fork(
        requirePrincipal(req),
        kind,
        req.params.id,
        input.body(req),
      );
      res.json(created(prompt.id, prompt.slug, version.id));
    },
  );
  return router;
}

/** `/prompts`, mounted under `/v2`: a workspace's saved prompts and, under `/partials`, partials. */
export function promptRouter(prompts: PromptService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });
  // Before `/:id`, which would take `partials` for a prompt's slug.
  router.mount(
    '/partials',
    promptRoutes(new ScopedRouter({ body: jsonBody(bodyLimit) }), prompts, 'partial'),
  );
  router.post(
    '/:id/render',
    {
      scope: 'prompts.render',
      summary:
        'Fills in a prompt version (`?version=`, or `id@3`, `id@latest`; the default otherwise) with `variables`: the chat completion request it makes, the root parameters winning over the prompt’s.',
      query: getPromptQuery,
      body: renderBody,
    },
    async (req, res, _next, input) => {
      const { ref, version: suffixed } = splitVersionSuffix(req.params.id);
      const { version } = input.query(req);
      const body = input.body(req);
      const data = await prompts.render(requirePrincipal(req), ref, parseVersion(version) ?? suffixed, body);
      res.json({ success: true, data });
    },
  );
  return promptRoutes(router, prompts, 'prompt');
}

/** `/organisation/prompts`, mounted under `/v2`: removed; prompts belong to a workspace now (410). */
export function removedOrganisationPromptRouter(): ScopedRouter {
  const router = new ScopedRouter();
  const gone = () => {
    throw new Gone(
      'Organisation-level prompts and partials are removed: prompts and partials now belong to a workspace and live at /v2/prompts and /v2/prompts/partials (name the workspace with workspace_id).',
      { code: 'route_removed' },
    );
  };
  const spec = {
    scope: 'authenticated',
    summary: 'Removed (410): prompts and partials live at /v2/prompts and /v2/prompts/partials.',
    query: 'none',
    body: 'none',
    status: 410,
  } as const;
  for (const path of ['/', '/*rest'] as const) {
    router.get(path, { scope: spec.scope, summary: spec.summary, query: spec.query, status: 410 }, gone);
    router.post(path, spec, gone);
    router.put(path, spec, gone);
    router.patch(path, spec, gone);
    router.delete(path, spec, gone);
  }
  return router;
}
