import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import type { Request, RequestHandler, Response } from 'express';
import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { AppError, ConfigError, loadConfig, NotFound, ServiceUnavailable } from '@switchyard/core';
import { captureLogger, settleLogs } from '@switchyard/core/testing';
import type { Principal } from '@switchyard/access';
import type { ServiceClient } from '@switchyard/runtime';
import { admin } from '@switchyard/proto';
import { DeploymentReporter, deploymentEnv, GATEWAY_VERSION, servedByDeployment } from './deployment.ts';

type Answer = MessageInitShape<typeof admin.HeartbeatResponseSchema>;

const ORGANISATION = randomUUID();
const RESEARCH = { id: randomUUID(), slug: 'research' };
const BILLING = { id: randomUUID(), slug: 'billing' };

function fakeAdmin() {
  const state = {
    answer: undefined as Answer | undefined,
    failure: undefined as Error | undefined,
    archived: false,
    requests: [] as admin.HeartbeatRequest[],
    deadlines: [] as Array<number | undefined>,
  };
  const client: ServiceClient<typeof admin.DeploymentService> = {
    async heartbeat(request, options) {
      state.requests.push(create(admin.HeartbeatRequestSchema, request));
      state.deadlines.push(options?.deadlineMs);
      if (state.failure) throw state.failure;
      if (state.archived) throw new NotFound("Deployment 'edge' not found.");
      if (!state.answer) throw new ServiceUnavailable('admin is starting.');
      return create(admin.HeartbeatResponseSchema, state.answer);
    },
    close() {},
    async waitForReady() {},
  };
  return { state, client };
}

const answer = (revision: number, settings: Answer['authSettings']): Answer => ({
  deploymentId: randomUUID(),
  slug: 'edge',
  settingsRevision: BigInt(revision),
  settingsUpdatedAt: new Date().toISOString(),
  authSettings: settings ?? {},
});

function reporterWith() {
  const fake = fakeAdmin();
  const captured = captureLogger();
  const reporter = new DeploymentReporter(fake.client, {
    organisationId: ORGANISATION,
    deployment: 'edge',
    intervalMs: 30_000,
    logger: captured.logger,
  });
  return { ...fake, reporter, captured };
}

const caller = (
  workspace: { id: string; slug: string } | null,
  organisationId = ORGANISATION,
): Principal => ({
  apiKeyId: randomUUID(),
  organisationId,
  workspaceId: workspace?.id ?? null,
  workspaceSlug: workspace?.slug ?? null,
  kind: workspace ? 'workspace_service' : 'organisation_admin',
  scopes: [],
  expiresAt: null,
  userId: null,
  name: 'Test key',
  organisationCreatedAt: null,
});

/** What the gate hands on for one request: nothing (served) or the error the gateway answers with. */
function through(gate: RequestHandler, method = 'POST'): Promise<AppError | undefined> {
  const req = { method } as Request;
  return new Promise((resolve, reject) => {
    gate(req, {} as Response, (err?: unknown) => {
      if (err === undefined) resolve(undefined);
      else if (err instanceof AppError) resolve(err);
      else reject(err as Error);
    });
  });
}

/** The deployment's gate behind an authentication that finds `principal` (none: 401). */
function gateFor(reporter: DeploymentReporter, principal: Principal | undefined) {
  const authentication: RequestHandler = (req, _res, next) => {
    req.principal = principal;
    next(principal ? undefined : new AppError(401, 'authentication_error', 'Missing or invalid API key.'));
  };
  return servedByDeployment(reporter, authentication);
}

describe('a gateway running as a deployment', () => {
  test('reports its instance and version, and is not ready and serves nobody before the first answer', async () => {
    const { state, reporter } = reporterWith();
    assert.equal(await reporter.report(), false);
    await assert.rejects(reporter.ready(), /deployment 'edge' have not been received/);
    const refused = await through(gateFor(reporter, caller(RESEARCH)));
    assert.equal(refused?.status, 503);
    assert.equal(refused?.code, 'deployment_settings_unavailable');
    // Not even authenticated callers learn more before the settings arrive.
    assert.equal((await through(gateFor(reporter, undefined)))?.status, 503);
    assert.equal(reporter.jwtAdmission(), undefined);

    const [request] = state.requests;
    assert.equal(request?.organisationId, ORGANISATION);
    assert.equal(request?.deployment, 'edge');
    assert.equal(request?.version, GATEWAY_VERSION);
    assert.match(request?.instanceId ?? '', /^[\w.:-]{1,128}$/);
    assert.ok(state.deadlines[0]! > 0, 'the report has a deadline');
  });

  test('the version reported has both versioned behaviours: block_inline_config (2.11.0) and MCP tool-call limits (2.18.0)', () => {
    const [major, minor] = GATEWAY_VERSION.split('.').map(Number);
    assert.ok(major! > 2 || (major === 2 && minor! >= 18), GATEWAY_VERSION);
  });

  test('serves every workspace of its organisation when allow_all_workspaces is on, and no other organisation', async () => {
    const { state, reporter } = reporterWith();
    state.answer = answer(1, { allowAllWorkspaces: true, workspacesAllowed: ['research'] });
    assert.equal(await reporter.report(), true);
    await reporter.ready();
    for (const workspace of [RESEARCH, BILLING]) {
      assert.equal(await through(gateFor(reporter, caller(workspace))), undefined);
    }
    const stranger = caller({ id: randomUUID(), slug: 'research' }, randomUUID());
    const refused = await through(gateFor(reporter, stranger));
    assert.equal(refused?.status, 403);
    assert.equal(refused?.code, 'organisation_not_served');
    assert.doesNotMatch(refused?.message ?? '', /edge/, 'another organisation is not told the deployment');
  });

  test('serves only the workspaces allowed, by id or slug, and refuses the others with 403', async () => {
    const { state, reporter } = reporterWith();
    state.answer = answer(1, { allowAllWorkspaces: false, workspacesAllowed: ['research', BILLING.id] });
    await reporter.report();
    assert.equal(await through(gateFor(reporter, caller(RESEARCH))), undefined);
    assert.equal(await through(gateFor(reporter, caller(BILLING))), undefined);
    const other = { id: randomUUID(), slug: 'marketing' };
    const refused = await through(gateFor(reporter, caller(other)));
    assert.equal(refused?.status, 403);
    assert.equal(refused?.code, 'workspace_not_served');
    assert.match(refused?.message ?? '', /Deployment 'edge' does not serve workspace 'marketing'/);
    const unbound = await through(gateFor(reporter, caller(null)));
    assert.equal(unbound?.status, 403);
    // Authentication still answers first for a caller it refuses.
    assert.equal((await through(gateFor(reporter, undefined)))?.status, 401);
    // Preflight requests pass untouched.
    assert.equal(await through(gateFor(reporter, caller(other)), 'OPTIONS'), undefined);
  });

  test('a changed deployment is applied at the next report; a failed report keeps what was applied', async () => {
    const { state, reporter, captured } = reporterWith();
    state.answer = answer(1, { workspacesAllowed: ['research'] });
    await reporter.report();
    assert.equal((await through(gateFor(reporter, caller(BILLING))))?.status, 403);

    state.answer = answer(2, {
      workspacesAllowed: ['research', 'billing'],
      jwtSubsAllowed: ['svc-a'],
      jwtSubWorkspaceMapping: { 'svc-a': 'billing' },
    });
    await reporter.report();
    assert.equal(await through(gateFor(reporter, caller(BILLING))), undefined);
    assert.deepEqual(reporter.jwtAdmission(), {
      subsAllowed: ['svc-a'],
      subWorkspaceMapping: { 'svc-a': 'billing' },
      workspacesAllowed: ['research', 'billing'],
    });

    state.failure = new ServiceUnavailable('admin is unavailable.');
    assert.equal(await reporter.report(), false);
    assert.equal(await reporter.report(), false);
    await reporter.ready();
    assert.equal(await through(gateFor(reporter, caller(BILLING))), undefined);
    await settleLogs();
    const warnings = captured
      .lines()
      .filter((line) => line.message === 'deployment report failed; the settings last applied stay in force');
    assert.equal(warnings.length, 1, 'an outage is logged once, not at every report');

    state.failure = undefined;
    state.answer = answer(3, { allowAllWorkspaces: true });
    assert.equal(await reporter.report(), true);
    assert.equal(reporter.jwtAdmission()?.workspacesAllowed, null);
  });

  test('a deployment archived (or never made) stops its gateways serving, until it is live again', async () => {
    const { state, reporter, captured } = reporterWith();
    state.answer = answer(1, { allowAllWorkspaces: true });
    await reporter.report();
    assert.equal(await through(gateFor(reporter, caller(RESEARCH))), undefined);

    state.archived = true;
    assert.equal(await reporter.report(), false);
    const refused = await through(gateFor(reporter, caller(RESEARCH)));
    assert.equal(refused?.status, 503);
    assert.equal(refused?.code, 'deployment_not_found');
    assert.match(refused?.message ?? '', /deployment 'edge' is archived or does not exist/);
    await assert.rejects(reporter.ready(), /archived or does not exist/);
    assert.equal(reporter.jwtAdmission(), undefined, 'no token is admitted either');
    await settleLogs();
    assert.ok(
      captured
        .lines()
        .some((line) => line.level === 'error' && /deployment not found/.test(String(line.message))),
    );

    state.archived = false;
    assert.equal(await reporter.report(), true);
    await reporter.ready();
    assert.equal(await through(gateFor(reporter, caller(RESEARCH))), undefined);
  });
});

describe('deployment settings', () => {
  test('DEPLOYMENT needs DEPLOYMENT_ORGANISATION, an organisation id', () => {
    assert.throws(() => loadConfig(deploymentEnv, { DEPLOYMENT: 'edge' }), ConfigError);
    assert.throws(
      () => loadConfig(deploymentEnv, { DEPLOYMENT: 'edge', DEPLOYMENT_ORGANISATION: 'default' }),
      ConfigError,
    );
    assert.throws(
      () => loadConfig(deploymentEnv, { DEPLOYMENT: 'edge/../x', DEPLOYMENT_ORGANISATION: ORGANISATION }),
      ConfigError,
    );
    const loaded = loadConfig(deploymentEnv, { DEPLOYMENT: 'edge', DEPLOYMENT_ORGANISATION: ORGANISATION });
    assert.equal(loaded.DEPLOYMENT, 'edge');
    assert.equal(loaded.DEPLOYMENT_HEARTBEAT_SECONDS, 30);
  });

  test("with DEPLOYMENT, the environment's JWT allow-lists are refused: the deployment's settings replace them", () => {
    for (const name of ['JWT_SUBS_ALLOWED', 'JWT_SUB_WORKSPACE_MAPPING', 'JWT_WORKSPACES_ALLOWED']) {
      assert.throws(
        () =>
          loadConfig(deploymentEnv, {
            DEPLOYMENT: 'edge',
            DEPLOYMENT_ORGANISATION: ORGANISATION,
            [name]: 'x',
          }),
        (err: unknown) => err instanceof ConfigError && err.message.includes(name),
      );
      // Without a deployment they are the allow-lists.
      assert.doesNotThrow(() => loadConfig(deploymentEnv, { [name]: 'x' }));
    }
  });
});
