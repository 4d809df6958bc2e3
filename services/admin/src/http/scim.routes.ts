import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { z } from 'zod';
import { AppError, toAppError, Unauthorized } from '@switchyard/core';
import { jsonBody } from '@switchyard/http';
import { attachAuditActor, requirePrincipal } from '@switchyard/access';
import { ScopedRouter, type BodyContent, type ErrorShape } from '@switchyard/runtime';
import type { ScimGroupService } from '../domain/scim-groups.service.ts';
import type { ScimMappingService } from '../domain/scim-mappings.service.ts';
import type { ScimTokenService } from '../domain/scim-tokens.service.ts';
import type { ScimUserService } from '../domain/scim-users.service.ts';
import {
  pagedList,
  presentScimAdminGroup,
  presentScimGroup,
  presentScimMapping,
  presentScimToken,
  presentScimUser,
  scimList,
  SCIM_ERROR_SCHEMA,
} from './scim.presenters.ts';
import {
  createScimMappingBody,
  groupFilter,
  issueScimTokenBody,
  listScimGroupsQuery,
  scimAdminPage,
  scimGroupBody,
  scimListQuery,
  scimPatchBody,
  scimUserBody,
  userFilter,
} from './scim.schemas.ts';

/** The SCIM services the routes call. */
export interface ScimDomain {
  tokens: ScimTokenService;
  users: ScimUserService;
  groups: ScimGroupService;
  mappings: ScimMappingService;
}

/** `/v1/admin/organisation/scim-token`: the token is shown once, when issued; masked afterwards. */
export function scimTokenRouter(tokens: ScimTokenService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });
  router.get(
    '/',
    { scope: 'organisation_scim.read', summary: "The organisation's SCIM token, masked.", query: 'none' },
    async (req, res) => {
      const credential = await tokens.getToken(requirePrincipal(req));
      res.json(presentScimToken(credential, tokens.maskedToken(credential)));
    },
  );
  router.post(
    '/',
    {
      scope: 'organisation_scim.update',
      summary: "Issues the organisation's SCIM token, shown this once (replace_existing to replace one).",
      query: 'none',
      body: { contentTypes: ['application/json'], schema: issueScimTokenBody, optional: true },
    },
    async (req, res, _next, input) => {
      const body = input.body(req);
      const { token, credential } = await tokens.issueToken(requirePrincipal(req), body.replace_existing);
      res.json(presentScimToken(credential, tokens.maskedToken(credential), token));
    },
  );
  router.delete(
    '/',
    {
      scope: 'organisation_scim.update',
      summary: "Deletes the organisation's SCIM token: provisioning stops.",
      query: 'none',
      body: 'none',
    },
    async (req, res) => {
      await tokens.deleteToken(requirePrincipal(req));
      res.json({});
    },
  );
  return router;
}

/** `/v1/scim`: the organisation's SCIM groups and their workspace mappings, for administrators. */
export function scimAdminRouter(
  scim: Pick<ScimDomain, 'groups' | 'mappings'>,
  bodyLimit: string,
): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });
  router.get(
    '/groups',
    {
      scope: 'organisation_scim.read',
      summary: 'The groups the identity provider has provisioned, by name if asked.',
      query: listScimGroupsQuery,
    },
    async (req, res, _next, input) => {
      const query = input.query(req);
      const [groups, total] = await scim.groups.listGroupsOf(
        requirePrincipal(req),
        query.search,
        pageOf(query),
      );
      res.json(pagedList(groups.map(presentScimAdminGroup), total, query));
    },
  );
  router.get(
    '/workspaces',
    {
      scope: 'organisation_scim.read',
      summary: 'Which SCIM groups give their members which workspace, in which role.',
      query: scimAdminPage,
    },
    async (req, res, _next, input) => {
      const query = input.query(req);
      const [mappings, total] = await scim.mappings.listMappings(requirePrincipal(req), pageOf(query));
      res.json(pagedList(mappings.map(presentScimMapping), total, query));
    },
  );
  router.post(
    '/workspaces',
    {
      scope: 'organisation_scim.update',
      summary: "Maps a SCIM group to a workspace: the group's members join it in the role given.",
      query: 'none',
      body: createScimMappingBody,
    },
    async (req, res, _next, input) => {
      const body = input.body(req);
      const mapping = await scim.mappings.createMapping(requirePrincipal(req), {
        workspaceId: body.workspace_id,
        role: body.role,
        groupId: body.scim_group_id,
        groupName: body.scim_group_name,
      });
      res.json(presentScimMapping(mapping));
    },
  );
  router.delete(
    '/workspaces/:id',
    {
      scope: 'organisation_scim.update',
      summary: 'Deletes a mapping of a SCIM group to a workspace.',
      query: 'none',
      body: 'none',
    },
    async (req, res) => {
      await scim.mappings.deleteMapping(requirePrincipal(req), req.params.id);
      res.json({ success: true });
    },
  );
  return router;
}

function pageOf(query: { page: number; page_size: number }) {
  return { offset: query.page * query.page_size, limit: query.page_size };
}

const SCIM_CHALLENGE = 'Bearer realm="SCIM", Basic realm="SCIM"';

/** The SCIM token as a bearer token, or as the password of Basic authentication. */
function presentedScimToken(authorization: string | undefined): string | undefined {
  const match = /^(bearer|basic)\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match) return undefined;
  if (match[1]!.toLowerCase() === 'bearer') return match[2];
  const decoded = Buffer.from(match[2]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return (colon === -1 ? decoded : decoded.slice(colon + 1)) || undefined;
}

/**
 * SCIM's own authentication: the organisation's SCIM token (not an API key), for the
 * organisation the path names and no other.
 */
function scimAuthentication(tokens: ScimTokenService): RequestHandler {
  return (req, _res, next) => {
    const organisationId = req.path.split('/')[1] ?? '';
    const token = presentedScimToken(req.headers.authorization);
    const refused = new Unauthorized('A valid SCIM token of this organisation is required.', {
      headers: { 'www-authenticate': SCIM_CHALLENGE },
    });
    if (!token) {
      next(refused);
      return;
    }
    tokens.authenticate(organisationId, token).then((ok) => {
      // Provisioning writes go to the audit log as the organisation's SCIM token.
      if (ok) attachAuditActor(req, { organisationId, authMethod: 'scim_token', name: 'SCIM token' });
      next(ok ? undefined : refused);
    }, next);
  };
}

const SCIM_TYPES = new Set(['uniqueness', 'invalidFilter', 'invalidValue', 'invalidPath', 'mutability']);

/**
 * The error a SCIM client is told of: body-parser's refusals, and otherwise the platform's one
 * translation, so that whatever it counts as the client's fault (a value the database refuses,
 * say) is a 4xx here too, in SCIM's shape.
 */
function scimErrorOf(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const e = (err ?? {}) as { type?: string; status?: number; message?: string };
  if (e.type === 'entity.parse.failed') {
    return new AppError(400, 'invalid_request_error', 'Request body is not valid JSON.', {
      code: 'invalidSyntax',
    });
  }
  if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    return new AppError(e.status, 'invalid_request_error', e.message ?? 'Bad request.');
  }
  return toAppError(err);
}

/** Errors of the SCIM endpoints in SCIM's shape (RFC 7644 section 3.12). */
const scimErrors: ErrorRequestHandler = (err, _req, res, next) => {
  const error = scimErrorOf(err);
  if (res.headersSent || error.status >= 500) {
    // A fault: the service's error handler logs it and answers.
    next(err);
    return;
  }
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.status(error.status).type('application/scim+json').json(scimError(error));
};

function scimError(error: AppError) {
  return {
    schemas: [SCIM_ERROR_SCHEMA],
    status: String(error.status),
    ...(error.code && SCIM_TYPES.has(error.code) ? { scimType: error.code } : {}),
    detail: error.message,
  };
}

function scim200(res: Response, body: unknown, status = 200): void {
  res.status(status).type('application/scim+json').json(body);
}

/** How the SCIM endpoints refuse (RFC 7644 §3.12), for their description. */
const SCIM_ERRORS: ErrorShape = {
  name: 'ScimError',
  contentType: 'application/scim+json',
  schema: z
    .object({
      schemas: z.array(z.literal(SCIM_ERROR_SCHEMA)),
      status: z.string().meta({ description: 'The HTTP status, as text.' }),
      scimType: z.string().optional(),
      detail: z.string(),
    })
    .meta({ description: "SCIM's own error shape (RFC 7644 §3.12)." }),
};

/** SCIM clients send `application/scim+json`; plain JSON is read too. */
const scimJson = <S extends z.ZodType>(schema: S) =>
  ({ contentTypes: ['application/scim+json', 'application/json'], schema }) as const satisfies BodyContent;

/** The declarations of a SCIM resource's six endpoints: `public`, each checking the SCIM token itself. */
function scimResource<B extends z.ZodType>(resource: 'Users' | 'Groups', body: B) {
  const one = resource === 'Users' ? 'user' : 'group';
  const common = {
    scope: 'public',
    credential: 'scim_token',
    responseType: 'application/scim+json',
    errors: SCIM_ERRORS,
  } as const;
  return {
    list: {
      ...common,
      summary: `SCIM: lists the organisation's ${resource.toLowerCase()}, filtered by one equality if asked.`,
      query: scimListQuery,
    },
    create: {
      ...common,
      summary: `SCIM: provisions a ${one}.`,
      query: 'none' as const,
      body: scimJson(body),
      status: 201,
    },
    read: { ...common, summary: `SCIM: one ${one}.`, query: 'none' as const },
    replace: { ...common, summary: `SCIM: replaces a ${one}.`, query: 'none' as const, body: scimJson(body) },
    patch: {
      ...common,
      summary: `SCIM: changes a ${one} by patch operations.`,
      query: 'none' as const,
      body: scimJson(scimPatchBody),
    },
    delete: {
      ...common,
      summary: `SCIM: deprovisions a ${one}.`,
      query: 'none' as const,
      body: 'none' as const,
    },
  };
}

/**
 * `/scim/:organisationId/Users` and `/Groups` (SCIM 2.0), for the organisation's identity
 * provider. Declared `public`: no API key reaches them; the SCIM token is checked before any
 * of them runs, for the organisation of the path.
 */
export function scimProtocolRouter(
  scim: Pick<ScimDomain, 'tokens' | 'users' | 'groups'>,
  bodyLimit: string,
): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });
  router.use(scimAuthentication(scim.tokens));
  const users = scimResource('Users', scimUserBody);
  const groups = scimResource('Groups', scimGroupBody);

  router.get('/:organisationId/Users', users.list, async (req, res, _next, input) => {
    const query = input.query(req);
    const [users, total] = await scim.users.listUsers(req.params.organisationId, userFilter(query.filter), {
      offset: query.startIndex - 1,
      limit: query.count,
    });
    scim200(res, scimList(users.map(presentScimUser), total, query.startIndex));
  });
  router.post('/:organisationId/Users', users.create, async (req, res, _next, input) => {
    const body = input.body(req);
    scim200(res, presentScimUser(await scim.users.createUser(req.params.organisationId, body)), 201);
  });
  router.get('/:organisationId/Users/:id', users.read, async (req, res) => {
    scim200(res, presentScimUser(await scim.users.getUser(req.params.organisationId, req.params.id)));
  });
  router.put('/:organisationId/Users/:id', users.replace, async (req, res, _next, input) => {
    const body = input.body(req);
    scim200(
      res,
      presentScimUser(await scim.users.replaceUser(req.params.organisationId, req.params.id, body)),
    );
  });
  router.patch('/:organisationId/Users/:id', users.patch, async (req, res, _next, input) => {
    const body = input.body(req);
    const user = await scim.users.patchUser(req.params.organisationId, req.params.id, body.Operations);
    scim200(res, presentScimUser(user));
  });
  router.delete('/:organisationId/Users/:id', users.delete, async (req, res) => {
    await scim.users.deleteUser(req.params.organisationId, req.params.id);
    scim200(res, {});
  });

  router.get('/:organisationId/Groups', groups.list, async (req, res, _next, input) => {
    const query = input.query(req);
    const [groups, total] = await scim.groups.listGroups(
      req.params.organisationId,
      { equality: groupFilter(query.filter) },
      { offset: query.startIndex - 1, limit: query.count },
    );
    scim200(res, scimList(groups.map(presentScimGroup), total, query.startIndex));
  });
  router.post('/:organisationId/Groups', groups.create, async (req, res, _next, input) => {
    const body = input.body(req);
    scim200(res, presentScimGroup(await scim.groups.createGroup(req.params.organisationId, body)), 201);
  });
  router.get('/:organisationId/Groups/:id', groups.read, async (req, res) => {
    scim200(res, presentScimGroup(await scim.groups.getGroup(req.params.organisationId, req.params.id)));
  });
  router.put('/:organisationId/Groups/:id', groups.replace, async (req, res, _next, input) => {
    const body = input.body(req);
    scim200(
      res,
      presentScimGroup(await scim.groups.replaceGroup(req.params.organisationId, req.params.id, body)),
    );
  });
  router.patch('/:organisationId/Groups/:id', groups.patch, async (req, res, _next, input) => {
    const body = input.body(req);
    const group = await scim.groups.patchGroup(req.params.organisationId, req.params.id, body.Operations);
    scim200(res, presentScimGroup(group));
  });
  router.delete('/:organisationId/Groups/:id', groups.delete, async (req, res) => {
    await scim.groups.deleteGroup(req.params.organisationId, req.params.id);
    scim200(res, {});
  });

  router.router.use(scimErrors);
  return router;
}
