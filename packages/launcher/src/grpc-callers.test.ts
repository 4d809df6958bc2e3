import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AppError } from '@switchyard/core';
import {
  GrpcStatus,
  clientTargets,
  createGrpcClient,
  serviceNames,
  type ServiceName,
} from '@switchyard/runtime';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { allServices } from './services.ts';

/**
 * Who may call each gRPC method, as reviewed: the services whose code calls it and no other.
 * A method served without a row here fails, and so does a row for a method no longer served.
 */
const expected: Record<string, readonly ServiceName[]> = {
  // Every HTTP-serving service but control-plane itself authenticates its callers this way.
  'switchyard.identity.v1.IdentityService.ResolveApiKey': ['gateway', 'admin', 'log-export'],
  'switchyard.identity.v1.IdentityService.ResolveWorkspace': ['gateway', 'admin', 'log-export'],
  // Admin's organisation settings hold the key settings.
  'switchyard.identity.v1.IdentityService.GetKeySettings': ['admin'],
  'switchyard.identity.v1.IdentityService.UpdateKeySettings': ['admin'],
  // SCIM provisioning runs in admin.
  'switchyard.identity.v1.IdentityService.ProvisionOrganisationUser': ['admin'],
  'switchyard.identity.v1.IdentityService.RemoveOrganisationUser': ['admin'],
  'switchyard.identity.v1.IdentityService.SetWorkspaceMember': ['admin'],
  // admin runs SSO logins and has control-plane open the session at their end.
  'switchyard.identity.v1.SsoSessionService.OpenSsoSession': ['admin'],
  'switchyard.configs.v1.ConfigService.GetConfig': ['gateway'],
  'switchyard.admin.v1.IntegrationService.ListIntegrations': ['gateway'],
  'switchyard.admin.v1.IntegrationService.GetIntegrationCredentials': ['gateway'],
  // Control-plane's guardrail webhooks and MCP integrations map secrets held or reached by admin.
  'switchyard.admin.v1.SecretReferenceService.ResolveSecretMappings': ['control-plane'],
  // A gateway instance reports itself and learns its deployment's authentication settings.
  'switchyard.admin.v1.DeploymentService.Heartbeat': ['gateway'],
  // The gateway enforces the organisation's settings; log exports read the fields they may not hold.
  'switchyard.admin.v1.OrganisationSettingsService.GetOrganisationSettings': ['gateway', 'log-export'],
  'switchyard.policy.v1.PolicyService.Check': ['gateway'],
  'switchyard.policy.v1.PolicyService.Accrue': ['gateway'],
  'switchyard.policy.v1.PolicyService.Settle': ['gateway'],
  'switchyard.policy.v1.UsageLedgerService.ListUsage': ['control-plane'],
  'switchyard.policy.v1.UsageLedgerService.ResetUsage': ['control-plane'],
  'switchyard.policy.v1.UsageLedgerService.KeyUsage': ['control-plane'],
  'switchyard.policy.v1.PolicyDirectoryService.ListPolicies': ['policy'],
  // Admin checks that an organisation's default guardrails exist.
  'switchyard.guardrails.v1.GuardrailDirectoryService.ListGuardrails': ['gateway', 'admin'],
  // The gateway reads the MCP servers it serves, their upstream credentials decrypted.
  'switchyard.mcp.v1.McpDirectoryService.GetMcpServer': ['gateway'],
  // The gateway records the batches created through it, and reads them to fetch their results.
  'switchyard.batches.v1.BatchRecordService.RecordBatch': ['gateway'],
  'switchyard.batches.v1.BatchRecordService.GetBatch': ['gateway'],
  // The gateway runs and renders saved prompts of a workspace (or shared with it).
  'switchyard.prompts.v1.PromptDirectoryService.GetPrompt': ['gateway'],
};

let h: ServiceHarness;
before(async () => {
  h = await startServiceHarness({ services: allServices });
});
after(() => h?.close());

const servers = () => allServices.filter((d) => hasGrpc(d.name));
function hasGrpc(service: ServiceName): boolean {
  try {
    h.grpcAddress(service);
    return true;
  } catch {
    return false;
  }
}

/** Every method every service serves, as registered at start-up. */
function registered() {
  return servers().flatMap((d) =>
    h
      .grpcMethods(d.name)
      .map((m) => ({ server: d.name, ...m, name: `${m.service.typeName}.${m.method.name}` })),
  );
}

/** Calls the method as `caller` with an empty request; resolves to the gRPC status the call ended with. */
async function callAs(
  server: ServiceName,
  method: ReturnType<typeof registered>[number],
  caller: ServiceName,
  security = h.security,
) {
  const client = createGrpcClient(method.service as never, {
    address: h.grpcAddress(server),
    target: server,
    security,
    caller,
    defaultDeadlineMs: 5_000,
  }) as unknown as Record<string, (request: object) => Promise<unknown>> & { close(): void };
  try {
    await client[method.method.localName]!({});
    return { code: GrpcStatus.OK, message: '' };
  } catch (err) {
    assert.ok(err instanceof AppError, `${method.name} as ${caller}: ${String(err)}`);
    const cause = err.cause as { code?: number } | undefined;
    return { code: cause?.code ?? GrpcStatus.UNKNOWN, message: err.message };
  }
}

describe('gRPC caller rules', () => {
  test('every served method has a reviewed row, and every row a served method', () => {
    const served = registered().map((m) => m.name);
    assert.ok(served.length > 0);
    for (const name of served) {
      assert.ok(name in expected, `${name} is served but has no row here: add who may call it`);
    }
    for (const name of Object.keys(expected)) {
      assert.ok(served.includes(name), `${name} has a row here but is not served`);
    }
  });

  test('each method names exactly the services of its row', () => {
    for (const m of registered()) {
      assert.deepEqual([...m.callers].sort(), [...(expected[m.name] ?? [])].sort(), m.name);
    }
  });

  test('a service named as a caller holds a client for the service it calls', () => {
    for (const m of registered()) {
      for (const caller of m.callers) {
        const definition = allServices.find((d) => d.name === caller);
        const clients = definition?.clients ?? [];
        assert.ok(
          clients.some((c) => clientTargets[c].service === m.server),
          `${m.name} is open to ${caller}, which has no client for ${m.server}`,
        );
      }
    }
  });

  test('every method × every calling service: the allowed are served, the others denied', async () => {
    const outcomes: string[] = [];
    for (const m of registered()) {
      for (const caller of serviceNames) {
        const allowed = (expected[m.name] ?? []).includes(caller);
        const { code, message } = await callAs(m.server, m, caller);
        if (allowed) {
          assert.ok(
            code !== GrpcStatus.PERMISSION_DENIED && code !== GrpcStatus.UNAUTHENTICATED,
            `${m.name} as ${caller} should be served, got code ${code}: ${message}`,
          );
        } else {
          assert.equal(code, GrpcStatus.PERMISSION_DENIED, `${m.name} as ${caller}: ${message}`);
          assert.match(message, new RegExp(`${m.method.name} is not open to ${caller} `));
        }
        outcomes.push(`${m.name} ${caller} ${allowed ? 'served' : 'denied'}`);
      }
    }
    assert.equal(outcomes.length, registered().length * serviceNames.length);
  });

  test("a caller presenting a token not derived from the deployment's secret is refused", async () => {
    for (const m of registered()) {
      const { code } = await callAs(m.server, m, expected[m.name]![0]!, { authToken: 'guessed-secret' });
      assert.equal(code, GrpcStatus.UNAUTHENTICATED, m.name);
    }
  });
});
