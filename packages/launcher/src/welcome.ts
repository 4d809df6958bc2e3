import type { BootstrapResult } from '@switchyard/control-plane';

export interface WelcomeInfo {
  baseUrl: string;
  /** Where the console is served. */
  consoleUrl: string;
  dataDir: string;
  bootstrap: BootstrapResult;
  seededIntegrations: string[];
  adminKeyFromEnv: boolean;
  headerPrefix: string;
}

/** What an operator needs for a first request, printed once the server listens. */
export function printWelcome(info: WelcomeInfo): void {
  const { bootstrap } = info;
  const lines = [
    '',
    `Switchyard is running (all-in-one) at ${info.baseUrl}`,
    `  console:       ${info.consoleUrl} (sign in with a key below)`,
    `  data folder:   ${info.dataDir}`,
  ];
  if (bootstrap.created) {
    lines.push(
      `  organisation:  ${bootstrap.organisation.id}`,
      `  workspace:     ${bootstrap.workspace?.id} (default)`,
      info.adminKeyFromEnv
        ? '  admin key:     the value of SWITCHYARD_ADMIN_KEY'
        : `  admin key:     ${bootstrap.adminKey}`,
      `  workspace key: ${bootstrap.workspaceKey}`,
      '',
      '  These keys are shown once and stored only as hashes. Keep them.',
      '',
      'Try it (the saved @mock integration needs no provider account):',
      '',
      `  curl -s ${info.baseUrl}/v1/chat/completions \\`,
      `    -H 'Authorization: Bearer ${bootstrap.workspaceKey}' \\`,
      "    -H 'Content-Type: application/json' \\",
      `    -d '{"model":"@mock/mock-1","messages":[{"role":"user","content":"Hello, Switchyard"}]}'`,
    );
  } else {
    lines.push(
      `  organisation:  ${bootstrap.organisation.id}`,
      '  Keys were printed when this data folder was first started; create more with',
      `  POST ${info.baseUrl}/v2/api-keys/workspace/service using the admin key.`,
    );
  }
  if (info.seededIntegrations.length > 0) {
    lines.push(
      '',
      `Integrations created from the environment: ${info.seededIntegrations.map((s) => `@${s}`).join(', ')}`,
    );
  }
  lines.push('');
  process.stdout.write(`${lines.join('\n')}\n`);
}
