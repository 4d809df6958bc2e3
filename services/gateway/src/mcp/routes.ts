import express, { type Request, type RequestHandler, type Response } from 'express';
import { z } from 'zod';
import { AppError, Unauthorized } from '@switchyard/core';
import { assertScope, hasScope, requireWorkspacePrincipal, type Principal } from '@switchyard/access';
import type { ScopedRouter } from '@switchyard/runtime';
import { leanBody } from '../http/request-body.ts';
import { McpRefusal, invalid, McpGatewayError } from './errors.ts';
import type { McpGateway } from './gateway.ts';

/** The scope a caller of the MCP gateway needs. */
export const MCP_SCOPE = 'agents.invoke';

const PRM_PATH = '/.well-known/oauth-protected-resource';

export interface McpRouteOptions {
  gateway: McpGateway;
  /** The data plane's authentication (API keys, JWTs, OAuth access tokens). */
  authentication: RequestHandler;
  maxBody: string;
  /** MCP_GATEWAY_BASE_URL: the base of the servers' URLs; unset: the request's origin. */
  baseUrl?: string | undefined;
  /** OAUTH_ISSUER: the authorization server; unset: the request's origin (served on the same host). */
  issuer?: string | undefined;
}

const slugParams = z.object({ slug: z.string().min(1).max(200) });

function originOf(req: Request): string {
  return `${req.protocol}://${req.get('host') ?? 'localhost'}`;
}

/** The server's URL at the gateway: the resource its tokens are issued for. */
export function resourceUrl(req: Request, baseUrl: string | undefined, slug: string): string {
  return `${(baseUrl ?? originOf(req)).replace(/\/+$/, '')}/mcp/${encodeURIComponent(slug)}`;
}

/** Its protected-resource metadata (RFC 9728): the well-known path inserted before the resource's path. */
export function metadataUrl(resource: string): string {
  const url = new URL(resource);
  return `${url.origin}${PRM_PATH}${url.pathname}`;
}

/**
 * The MCP gateway's routes: `/mcp/:slug` (POST, GET, DELETE: MCP's streamable HTTP transport)
 * and the servers' protected-resource metadata. Refusals are JSON-RPC errors; a 401 carries
 * the `WWW-Authenticate` challenge that points an MCP client at the metadata, and through it
 * at the authorization server.
 */
export function mcpRoutes(router: ScopedRouter, options: McpRouteOptions): void {
  const { gateway } = options;
  const challenge = (req: Request, slug: string, error?: 'invalid_token' | 'insufficient_scope') => {
    const resource = resourceUrl(req, options.baseUrl, slug);
    return [
      `Bearer resource_metadata="${metadataUrl(resource)}"`,
      `scope="${MCP_SCOPE}"`,
      ...(error ? [`error="${error}"`] : []),
    ].join(', ');
  };
  const refuse = (res: Response, refusal: McpRefusal, status = refusal.httpStatus) => {
    res
      .status(status === 200 ? refusal.data.status : status)
      .set(refusal.headers)
      .json(refusal.toResponse(undefined));
  };
  /** A refusal of the caller itself, before any JSON-RPC exchange: in the one error shape. */
  const refuseCaller = (res: Response, err: AppError) => {
    res.status(err.status).set(err.headers).json(err.toBody());
  };
  const unauthorized = (req: Request, res: Response, message: string, tokenGiven: boolean) => {
    res.setHeader(
      'www-authenticate',
      challenge(req, String(req.params.slug), tokenGiven ? 'invalid_token' : undefined),
    );
    refuseCaller(
      res,
      new Unauthorized(message, { code: tokenGiven ? 'invalid_token' : 'missing_credentials' }),
    );
  };

  // Authentication, the scope and the token's resource, answered with the challenge MCP
  // clients follow, before the route's own guard (which then finds them checked).
  const admit: RequestHandler = (req, res, next) => {
    // A CORS preflight carries no credentials; the entry point's CORS handling answers it.
    if (req.method === 'OPTIONS') {
      next();
      return;
    }
    const tokenGiven = Object.keys(req.headers).some(
      (name) => name === 'authorization' || name.endsWith('api-key'),
    );
    options.authentication(req, res, (err?: unknown) => {
      if (err !== undefined) {
        if (err instanceof AppError && err.status !== 401) refuseCaller(res, err);
        else unauthorized(req, res, 'Missing or invalid API key or token.', tokenGiven);
        return;
      }
      const principal = req.principal as Principal | undefined;
      if (!principal) {
        unauthorized(req, res, 'Missing or invalid API key or token.', tokenGiven);
        return;
      }
      const slug = String(req.params.slug);
      const resource = resourceUrl(req, options.baseUrl, slug);
      if (
        principal.authMethod === 'oauth' &&
        principal.oauthResource &&
        principal.oauthResource.replace(/\/+$/, '') !== resource
      ) {
        unauthorized(req, res, `The access token was not issued for ${resource}.`, true);
        return;
      }
      try {
        assertScope(principal, MCP_SCOPE);
        requireWorkspacePrincipal(req);
      } catch (refusal) {
        if (!(refusal instanceof AppError)) throw refusal;
        if (!hasScope(principal, MCP_SCOPE)) {
          res.setHeader('www-authenticate', challenge(req, slug, 'insufficient_scope'));
        }
        refuseCaller(res, refusal);
        return;
      }
      next();
    });
  };

  const serve =
    (handle: (req: Request, res: Response) => Promise<void>): RequestHandler =>
    (req, res) => {
      handle(req, res).catch((err: unknown) => {
        if (res.headersSent) {
          if (!res.writableEnded) res.end();
          return;
        }
        if (err instanceof McpRefusal) refuse(res, err);
        else
          refuse(
            res,
            new McpRefusal(McpGatewayError.Unavailable, 'The MCP request failed in the gateway.', {
              status: 500,
              type: 'api_error',
              code: 'internal_error',
            }),
            500,
          );
      });
    };

  const admitted = async (req: Request) => {
    const principal = req.principal as Principal & { workspaceId: string };
    return gateway.admit(req, principal);
  };

  // The body is read after the scope check; one that is too large is a 413 in JSON-RPC's terms.
  const body = leanBody(options.maxBody, express.raw({ type: () => true, limit: options.maxBody }));
  const readBody: RequestHandler = (req, res, next) =>
    body(req, res, (err?: unknown) => {
      if (err === undefined) {
        next();
        return;
      }
      const status = (err as { status?: unknown }).status;
      refuse(
        res,
        invalid(
          McpGatewayError.InvalidRequest,
          err instanceof Error ? err.message : 'The body cannot be read.',
        ),
        typeof status === 'number' ? status : 400,
      );
    });

  router.router.use('/mcp/:slug', admit);
  router.post(
    '/mcp/:slug',
    {
      scope: MCP_SCOPE,
      summary:
        "Sends one JSON-RPC message to an MCP server through the gateway (MCP's streamable HTTP transport).",
      description:
        "The server's tools/list is filtered to the tools the caller may call; a tools/call is checked against the server's tool access, rate and usage limits (target `mcp_tools`) and guardrails before its upstream sees it, and its result against the output guardrails. Answered in JSON or as a server-sent event stream, as the upstream answers; refusals are JSON-RPC errors (-32003 forbidden, -32004 not found, -32029 rate or usage limit, -32046 guardrail denied, -32050/-32052 upstream unavailable or failed).",
      query: 'none',
      params: slugParams,
      body: {
        contentTypes: ['application/json'],
        description:
          'One JSON-RPC 2.0 message: a request, a notification, or an answer to a request of the server.',
      },
      streams: true,
    },
    readBody,
    serve(async (req, res) => gateway.post(req, res, await admitted(req))),
  );
  router.get(
    '/mcp/:slug',
    {
      scope: MCP_SCOPE,
      summary:
        "Opens the MCP server's event stream (its requests and notifications to the client), passed through.",
      query: 'none',
      params: slugParams,
      responseType: 'text/event-stream',
    },
    serve(async (req, res) => gateway.passThrough(req, res, await admitted(req))),
  );
  router.delete(
    '/mcp/:slug',
    {
      scope: MCP_SCOPE,
      summary: 'Ends an MCP session (`Mcp-Session-Id`) at the MCP server.',
      query: 'none',
      params: slugParams,
      body: 'none',
    },
    serve(async (req, res) => gateway.passThrough(req, res, await admitted(req))),
  );
  router.get(
    `${PRM_PATH}/mcp/:slug`,
    {
      scope: 'public',
      summary: "An MCP server's protected-resource metadata (RFC 9728): where its access tokens come from.",
      query: 'none',
      params: slugParams,
    },
    (req, res) => {
      const origin = originOf(req);
      const slug = String(req.params.slug);
      res.json({
        resource: resourceUrl(req, options.baseUrl, slug),
        authorization_servers: [options.issuer ?? origin],
        scopes_supported: [MCP_SCOPE],
        bearer_methods_supported: ['header'],
        resource_name: `MCP server ${slug}`,
      });
    },
  );
}
