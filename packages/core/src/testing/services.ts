import { randomBytes } from 'node:crypto';

const HOW_TO_START =
  'Start the local services with `bash deploy/local/deps.sh up` and export their settings with ' +
  '`eval "$(bash deploy/local/deps.sh env)"` before running the contract tests.';

/**
 * Reads the connection setting of a real service for a contract test. A missing setting
 * fails the test with instructions: contract tests never skip.
 */
export function requireServiceEnv(name: 'DATABASE_URL' | 'REDIS_URL' | 'KAFKA_BROKERS'): string {
  const value = process.env[name];
  if (!value || value.trim() === '') {
    throw new Error(`${name} is not set. ${HOW_TO_START}`);
  }
  return value.trim();
}

/** A short random lower-case name part, unique per run, for schemas, key prefixes and topics. */
export function uniqueSuffix(bytes = 5): string {
  return randomBytes(bytes).toString('hex');
}
