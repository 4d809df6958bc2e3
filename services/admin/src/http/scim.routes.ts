import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import {
  attachAuditActor,
  AppError,
  jsonBody,
  parseInput,
  requirePrincipal,
  ScopedRouter,
  toAppError,
  Unauthorized,
} from '@switchyard/platform';
import type { ScimService } from '../domain/scim.service.ts';
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

/** `/v1/admin/organisation/scim-token`: the token is shown once, when issued; masked afterwards. */
export function scimTokenRouter(scim: ScimService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });
  router.get('/', 'organisation_scim.read', async (req, res) => {
    const credential = await scim.getToken(requirePrincipal(req));
    res.json(presentScimToken(credential, scim.maskedToken(credential)));
  });
  router.post('/', 'organisation_scim.update', async (req, res) => {
    const body = parseInput(issueScimTokenBody, req.body ?? {});
    const { token, credential } = await scim.issueToken(requirePrincipal(req), body.replace_existing);
    res.json(presentScimToken(credential, scim.maskedToken(credential), token));
  });
  router.delete('/', 'organisation_scim.update', async (req, res) => {
    await scim.deleteToken(requirePrincipal(req));
    res.json({});
  });
  return router;
}

/** `/v1/scim`: the organisation's SCIM groups and their workspace mappings, for administrators. */
export function scimAdminRouter(scim: ScimService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });
  router.get('/groups', 'organisation_scim.read', async (req, res) => {
    const query = parseInput(listScimGroupsQuery, req.query, 'query');
    const [groups, total] = await scim.listGroupsOf(requirePrincipal(req), query.search, pageOf(query));
    res.json(pagedList(groups.map(presentScimAdminGroup), total, query));
  });
  router.get('/workspaces', 'organisation_scim.read', async (req, res) => {
    const query = parseInput(scimAdminPage, req.query, 'query');
    const [mappings, total] = await scim.listMappings(requirePrincipal(req), pageOf(query));
    res.json(pagedList(mappings.map(presentScimMapping), total, query));
  });
  router.post('/workspaces', 'organisation_scim.update', async (req, res) => {
    const body = parseInput(createScimMappingBody, req.body);
    const mapping = await scim.createMapping(requirePrincipal(req), {
      workspaceId: body.workspace_id,
      role: body.role,
      groupId: body.scim_group_id,
      groupName: body.scim_group_name,
    });
    res.json(presentScimMapping(mapping));
  });
  router.delete('/workspaces/:id', 'organisation_scim.update', async (req, res) => {
    await scim.deleteMapping(requirePrincipal(req), req.params.id);
    res.json({ success: true });
  });
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
function scimAuthentication(scim: ScimService): RequestHandler {
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
    scim.authenticate(organisationId, token).then((ok) => {
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

/**
 * `/scim/:organisationId/Users` and `/Groups` (SCIM 2.0), for the organisation's identity
 * provider. Declared `public`: no API key reaches them; the SCIM token is checked before any
 * of them runs, for the organisation of the path.
 */
export function scimProtocolRouter(scim: ScimService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });
  router.use(scimAuthentication(scim));

  router.get('/:organisationId/Users', 'public', async (req, res) => {
    const query = parseInput(scimListQuery, req.query, 'query');
    const [users, total] = await scim.listUsers(req.params.organisationId, userFilter(query.filter), {
      offset: query.startIndex - 1,
      limit: query.count,
    });
    scim200(res, scimList(users.map(presentScimUser), total, query.startIndex));
  });
  router.post('/:organisationId/Users', 'public', async (req, res) => {
    const body = parseInput(scimUserBody, req.body);
    scim200(res, presentScimUser(await scim.createUser(req.params.organisationId, body)), 201);
  });
  router.get('/:organisationId/Users/:id', 'public', async (req, res) => {
    scim200(res, presentScimUser(await scim.getUser(req.params.organisationId, req.params.id)));
  });
  router.put('/:organisationId/Users/:id', 'public', async (req, res) => {
    const body = parseInput(scimUserBody, req.body);
    scim200(res, presentScimUser(await scim.replaceUser(req.params.organisationId, req.params.id, body)));
  });
  router.patch('/:organisationId/Users/:id', 'public', async (req, res) => {
    const body = parseInput(scimPatchBody, req.body);
    const user = await scim.patchUser(req.params.organisationId, req.params.id, body.Operations);
    scim200(res, presentScimUser(user));
  });
  router.delete('/:organisationId/Users/:id', 'public', async (req, res) => {
    await scim.deleteUser(req.params.organisationId, req.params.id);
    scim200(res, {});
  });

  router.get('/:organisationId/Groups', 'public', async (req, res) => {
    const query = parseInput(scimListQuery, req.query, 'query');
    const [groups, total] = await scim.listGroups(
      req.params.organisationId,
      { equality: groupFilter(query.filter) },
      { offset: query.startIndex - 1, limit: query.count },
    );
    scim200(res, scimList(groups.map(presentScimGroup), total, query.startIndex));
  });
  router.post('/:organisationId/Groups', 'public', async (req, res) => {
    const body = parseInput(scimGroupBody, req.body);
    scim200(res, presentScimGroup(await scim.createGroup(req.params.organisationId, body)), 201);
  });
  router.get('/:organisationId/Groups/:id', 'public', async (req, res) => {
    scim200(res, presentScimGroup(await scim.getGroup(req.params.organisationId, req.params.id)));
  });
  router.put('/:organisationId/Groups/:id', 'public', async (req, res) => {
    const body = parseInput(scimGroupBody, req.body);
    scim200(res, presentScimGroup(await scim.replaceGroup(req.params.organisationId, req.params.id, body)));
  });
  router.patch('/:organisationId/Groups/:id', 'public', async (req, res) => {
    const body = parseInput(scimPatchBody, req.body);
    const group = await scim.patchGroup(req.params.organisationId, req.params.id, body.Operations);
    scim200(res, presentScimGroup(group));
  });
  router.delete('/:organisationId/Groups/:id', 'public', async (req, res) => {
    await scim.deleteGroup(req.params.organisationId, req.params.id);
    scim200(res, {});
  });

  router.router.use(scimErrors);
  return router;
}
