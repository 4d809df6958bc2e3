import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { RequestHandler } from 'express';
import { z } from 'zod';
import { AppError, env, Forbidden, ServiceUnavailable, type Logger } from '@switchyard/core';
import type { JwtAdmission, Principal } from '@switchyard/access';
import type { ServiceClient } from '@switchyard/runtime';
import type { admin } from '@switchyard/proto';

/**
 * The gateway's version as its deployment's heartbeats report it. Admin tells from it which
 * versioned behaviours a deployment has: `block_inline_config` from 2.11.0, MCP tool-call rate
 * limits from 2.18.0.
 */
export const GATEWAY_VERSION = '2.18.0';

/** The settings naming the deployment a gateway runs as. */
export const deploymentEnvSchema = z.object({
  DEPLOYMENT: env
    .optionalString()
    .pipe(
      z
        .string()
        .regex(/^[a-zA-Z0-9_-]{1,50}$/, 'a deployment id or slug')
        .optional(),
    )
    .meta({
      description:
        "the deployment (id or slug) this gateway runs as: it reports to admin, serves only the deployment's organisation and the workspaces its `auth_settings` allow, and admits the JWT subjects they name (the `JWT_SUBS_ALLOWED`, `JWT_SUB_WORKSPACE_MAPPING` and `JWT_WORKSPACES_ALLOWED` allow-lists are then refused); empty: no deployment, every organisation served",
    }),
  DEPLOYMENT_ORGANISATION: env.optionalString().pipe(z.uuid().optional()).meta({
    description: 'the id of the organisation the deployment belongs to; required with `DEPLOYMENT`',
  }),
  DEPLOYMENT_HEARTBEAT_SECONDS: env.int(30, 1, 300).meta({
    description:
      "how often the gateway reports to admin and takes up its deployment's current settings (a deployment is `healthy` while a report is at most 90 s old)",
  }),
});

/** The deployment settings with the rules between them and the JWT allow-lists checked. */
export const deploymentEnv = deploymentEnvSchema
  .extend({
    JWT_SUBS_ALLOWED: env.optionalString(),
    JWT_SUB_WORKSPACE_MAPPING: env.optionalString(),
    JWT_WORKSPACES_ALLOWED: env.optionalString(),
  })
  .superRefine((v, ctx) => {
    if (v.DEPLOYMENT === undefined) return;
    if (v.DEPLOYMENT_ORGANISATION === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['DEPLOYMENT_ORGANISATION'],
        message: "required with DEPLOYMENT: the id of the deployment's organisation",
      });
    }
    for (const name of ['JWT_SUBS_ALLOWED', 'JWT_SUB_WORKSPACE_MAPPING', 'JWT_WORKSPACES_ALLOWED'] as const) {
      if (v[name] !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message:
            "not used with DEPLOYMENT: the deployment's auth_settings say which subjects and workspaces are admitted",
        });
      }
    }
  });

/** What a deployment lets through, as its last heartbeat answered. */
export interface ServedDeployment {
  id: string;
  slug: string;
  organisationId: string;
  revision: bigint;
  /** Null: every workspace of the organisation. */
  workspaces: ReadonlySet<string> | null;
  jwt: JwtAdmission;
}

export interface DeploymentReporterOptions {
  organisationId: string;
  deployment: string;
  intervalMs: number;
  logger: Logger;
  /** Stable for the life of the process (default: the host name and a random suffix). */
  instanceId?: string;
  deadlineMs?: number;
}

/** Why a gateway of a deployment serves nothing: no settings yet, or no such live deployment. */
type Unserved = 'not_received' | 'not_found';

function unserved(reason: Unserved, deployment: string): ServiceUnavailable {
  return reason === 'not_received'
    ? new ServiceUnavailable(
        'This gateway has not yet received the settings of its deployment; try again shortly.',
        { code: 'deployment_settings_unavailable' },
      )
    : new ServiceUnavailable(`This gateway's deployment '${deployment}' is archived or does not exist.`, {
        code: 'deployment_not_found',
      });
}

/** Before the first answer, the gateway asks again this soon. */
const FIRST_RETRY_MS = 1_000;

/** An instance id admin accepts: letters, digits, `_ . : -`, up to 128 characters. */
function defaultInstanceId(): string {
  const host =
    hostname()
      .replace(/[^\w.:-]/g, '-')
      .slice(0, 100) || 'gateway';
  return `${host}-${randomBytes(4).toString('hex')}`;
}

function served(answer: admin.HeartbeatResponse, organisationId: string): ServedDeployment {
  const settings = answer.authSettings;
  const allowed = settings?.workspacesAllowed ?? [];
  const workspaces = settings?.allowAllWorkspaces ? null : new Set(allowed);
  return {
    id: answer.deploymentId,
    slug: answer.slug,
    organisationId,
    revision: answer.settingsRevision,
    workspaces,
    jwt: {
      subsAllowed: settings?.jwtSubsAllowed ?? [],
      subWorkspaceMapping: { ...settings?.jwtSubWorkspaceMapping },
      workspacesAllowed: workspaces === null ? null : [...workspaces],
    },
  };
}

/**
 * A gateway running as a named deployment: it reports its instance and version to admin on
 * an interval and is answered its deployment's settings, which it applies from then on. A
 * report that fails keeps the settings last applied; until the first answer nothing is served.
 */
export class DeploymentReporter {
  private current: ServedDeployment | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private failing = false;
  private reason: Unserved = 'not_received';
  readonly instanceId: string;

  constructor(
    private readonly client: ServiceClient<typeof admin.DeploymentService>,
    private readonly options: DeploymentReporterOptions,
  ) {
    this.instanceId = options.instanceId ?? defaultInstanceId();
  }

  /** The deployment's settings as last applied; undefined before the first answer. */
  get settings(): ServedDeployment | undefined {
    return this.current;
  }

  /** Reports once and applies the answer; false when admin could not be reached or refused. */
  async report(): Promise<boolean> {
    const { client, options } = this;
    try {
      const answer = await client.heartbeat(
        {
          organisationId: options.organisationId,
          deployment: options.deployment,
          instanceId: this.instanceId,
          version: GATEWAY_VERSION,
        },
        { deadlineMs: options.deadlineMs ?? 5_000 },
      );
      const previous = this.current?.revision;
      this.current = served(answer, options.organisationId);
      if (previous !== answer.settingsRevision) {
        options.logger.info('deployment settings applied', {
          deployment: answer.slug,
          revision: String(answer.settingsRevision),
        });
      }
      if (this.failing) options.logger.info('deployment reports answered again', { deployment: answer.slug });
      this.failing = false;
      return true;
    } catch (err) {
      // A definite answer, not an outage: the deployment was archived or never existed.
      if (err instanceof AppError && err.status === 404) {
        if (this.reason !== 'not_found') {
          options.logger.error('deployment not found: nothing is served until it exists again', {
            deployment: options.deployment,
          });
        }
        this.current = undefined;
        this.reason = 'not_found';
        this.failing = true;
        return false;
      }
      // Logged when reports start failing, not at every interval of an outage.
      if (!this.failing) {
        options.logger.warn('deployment report failed; the settings last applied stay in force', {
          deployment: options.deployment,
          error: String(err),
        });
      }
      this.failing = true;
      return false;
    }
  }

  /** Reports now and then on the interval; before the first answer, every second. */
  start(): void {
    const next = (ok: boolean) => {
      if (this.stopped) return;
      const delay = ok || this.current ? this.options.intervalMs : FIRST_RETRY_MS;
      this.timer = setTimeout(() => void this.report().then(next), delay);
      this.timer.unref();
    };
    void this.report().then(next);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** Ready once the deployment's settings have been received. */
  async ready(): Promise<void> {
    if (!this.current) {
      throw new Error(
        this.reason === 'not_found'
          ? `deployment '${this.options.deployment}' is archived or does not exist`
          : `the settings of deployment '${this.options.deployment}' have not been received yet`,
      );
    }
  }

  /** Why nothing is served while there are no settings. */
  unserved(): ServiceUnavailable {
    return unserved(this.reason, this.options.deployment);
  }

  /** The JWT admission of the deployment; undefined (no token admitted) before the first answer. */
  jwtAdmission(): JwtAdmission | undefined {
    return this.current?.jwt;
  }

  /** Refuses a caller of another organisation, or of a workspace the deployment does not serve. */
  check(principal: Principal): void {
    const deployment = this.current;
    if (!deployment) throw unserved(this.reason, this.options.deployment);
    if (principal.organisationId !== deployment.organisationId) {
      throw new Forbidden("This gateway does not serve the caller's organisation.", {
        code: 'organisation_not_served',
      });
    }
    const { workspaces } = deployment;
    if (workspaces === null) return;
    const { workspaceId, workspaceSlug } = principal;
    if (
      (workspaceId !== null && workspaces.has(workspaceId)) ||
      (workspaceSlug !== null && workspaces.has(workspaceSlug))
    )
      return;
    throw new Forbidden(
      `Deployment '${deployment.slug}' does not serve ${workspaceSlug ? `workspace '${workspaceSlug}'` : 'callers without a workspace'}.`,
      { code: 'workspace_not_served' },
    );
  }
}

/**
 * Authentication, then the deployment's check of the caller. Before the deployment's settings
 * arrive every request is answered 503, authenticated or not.
 */
export function servedByDeployment(
  reporter: DeploymentReporter,
  authentication: RequestHandler,
): RequestHandler {
  return (req, res, next) => {
    if (req.method === 'OPTIONS') {
      next();
      return;
    }
    if (!reporter.settings) {
      next(reporter.unserved());
      return;
    }
    authentication(req, res, (err?: unknown) => {
      if (err !== undefined) {
        next(err);
        return;
      }
      try {
        if (req.principal) reporter.check(req.principal);
        next();
      } catch (refusal) {
        next(refusal);
      }
    });
  };
}
