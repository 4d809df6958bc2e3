import fc from 'fast-check';
import {
  type GuardrailActions,
  type GuardrailCheckId,
  parseGuardrailChecks,
  runGuardrail,
  type Span,
} from '@switchyard/guardrails';
import type { LoadedGuardrail } from '../domain/guardrails.ts';

/** What the stream guards' tests share: guardrails built in memory, upstream bodies, answers with matches in them. */

export type CheckSpec = [GuardrailCheckId, Record<string, unknown>];

let made = 0;

/** A guardrail as the gateway runs it, with these checks and actions. */
export function guardrail(checks: CheckSpec[], actions: Partial<GuardrailActions>): LoadedGuardrail {
  made += 1;
  return {
    id: `g${made}`,
    slug: `guard_g${made}`,
    workspaceId: '',
    versionId: `v${made}`,
    name: `g${made}`,
    checks: parseGuardrailChecks(checks.map(([id, parameters]) => ({ id, parameters }))),
    actions: { deny: false, async: false, redact: false, ...actions },
  };
}

export const pii: CheckSpec = ['default.pii', { categories: ['email'] }];
export const words: CheckSpec = [
  'default.contains',
  { operator: 'none', words: ['classified', 'top secret'] },
];

/** The upstream's body as reads of the given byte pieces, noting how far it was read and whether it was stopped. */
export function upstream(reads: Uint8Array[]) {
  const seen = { reads: 0, returned: false };
  async function* body() {
    try {
      for (const read of reads) {
        seen.reads += 1;
        yield read;
      }
    } finally {
      seen.returned = seen.reads < reads.length;
    }
  }
  return { body: body(), seen };
}

/** The spans of `text` the guardrail's failed checks matched. */
export function refusedSpans(guard: LoadedGuardrail, text: string): Span[] {
  const verdict = runGuardrail(guard, { text, phase: 'output' });
  return verdict.verdicts.filter((v) => !v.passed).flatMap((v) => v.matches ?? []);
}

/** Answers mixing emails and `secrets` with filler and near misses (`noise`). */
export function answers(secret: fc.Arbitrary<string>, noise: fc.Arbitrary<string>): fc.Arbitrary<string> {
  const filler = fc.stringMatching(/^[a-z ,.\n]{0,12}$/);
  const email = fc
    .tuple(
      fc.stringMatching(/^[a-z][a-z0-9.]{0,8}$/),
      fc.stringMatching(/^[a-z]{1,8}$/),
      fc.constantFrom('com', 'org'),
    )
    .map(([local, domain, tld]) => `${local}@${domain}.${tld}`);
  const piece = fc.oneof(
    { arbitrary: filler, weight: 4 },
    { arbitrary: email, weight: 1 },
    { arbitrary: secret, weight: 1 },
    { arbitrary: noise, weight: 2 },
  );
  return fc.array(piece, { maxLength: 8 }).map((pieces) => pieces.join(' '));
}

export const cuts = fc.array(fc.nat(), { maxLength: 12 });
