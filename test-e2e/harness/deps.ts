// The real dependencies (PostgreSQL, Redis, Kafka) come from deploy/local/deps.sh.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const depsScript = 'deploy/local/deps.sh';

export interface DependencyUrls {
  /** The maintenance database URL; each run creates its own database beside it. */
  databaseUrl: string;
  redisUrl: string;
  kafkaBrokers: string[];
}

interface ScriptResult {
  code: number | null;
  output: string;
}

function runDeps(command: string, timeoutMs: number): Promise<ScriptResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [depsScript, command], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const collect = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.length > 64_000) output = output.slice(-32_000);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      output += `\n(deps.sh ${command} killed after ${timeoutMs} ms)`;
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

async function depsOrThrow(command: string, timeoutMs: number): Promise<string> {
  const result = await runDeps(command, timeoutMs);
  if (result.code !== 0) {
    const tail = result.output.trim().split('\n').slice(-30).join('\n');
    throw new Error(`\`bash ${depsScript} ${command}\` failed (exit ${result.code}):\n${tail}`);
  }
  return result.output;
}

/**
 * Starts PostgreSQL, Redis and Kafka unless they already run (deps.sh up is idempotent),
 * then returns their connection settings. Throws, with the script's output, when they
 * cannot be started: the suite must fail, never skip, without its dependencies.
 */
export async function ensureDependencies(): Promise<DependencyUrls> {
  const status = await runDeps('status', 30_000);
  if (status.code !== 0) {
    try {
      await depsOrThrow('up', 15 * 60_000);
    } catch (err) {
      throw new Error(
        `The end-to-end suite needs PostgreSQL, Redis and Kafka and could not start them.\n${(err as Error).message}`,
      );
    }
  }
  const env: Record<string, string> = Object.fromEntries(
    [...(await depsOrThrow('env', 30_000)).matchAll(/^export (\w+)=(.*)$/gm)].map((m) => [
      m[1],
      m[2]!.trim(),
    ]),
  );
  const missing = ['DATABASE_URL', 'REDIS_URL', 'KAFKA_BROKERS'].filter((name) => !env[name]);
  if (missing.length > 0) throw new Error(`deps.sh env did not print ${missing.join(', ')}`);
  return {
    databaseUrl: env.DATABASE_URL!,
    redisUrl: env.REDIS_URL!,
    kafkaBrokers: env
      .KAFKA_BROKERS!.split(',')
      .map((b) => b.trim())
      .filter(Boolean),
  };
}

/** SIGKILLs the broker (a crash); returns once the process is gone. */
export async function killKafka(): Promise<void> {
  await depsOrThrow('kafka-kill', 120_000);
}

/** Starts the broker on its existing data and waits until it serves. */
export async function startKafka(): Promise<void> {
  await depsOrThrow('kafka-start', 300_000);
}
