import type { GatewayRequest } from './gateway-request.ts';
import type { GuardStreamOptions } from './guardrail-stream.ts';
import { checkInput, checkOutput, type CheckFacts, type LoadedGuardrail } from './guardrails.ts';
import { answerUnits, requestTexts, type TextOperation } from './operation-texts.ts';

/** A request's guardrails around one answer, once its input has been checked. */
export interface AnswerGuardrails<B> {
  /** The body to send: the request's, or its redacted copy. */
  body: B;
  /** The client's bytes while they still say what `body` does; undefined once redacted. */
  raw: Buffer | undefined;
  /** The output guardrails, in the config's order (they key the cache too). */
  output: readonly LoadedGuardrail[];
  /** A whole answer as the client is to get it; a failure (status 300 and up) is not checked. */
  checkAnswer(answer: Buffer, status: number): Promise<Buffer>;
  /** A stream checked as it flows (its runs recorded when it ends); a failure passes as it is. */
  checkStream(events: AsyncIterable<Uint8Array>, status: number): AsyncIterable<Uint8Array>;
}

/**
 * Runs the request's input guardrails on `body` (in `operation`'s texts) and returns the checks
 * its answer goes through: whole answers by `operation`'s answer units, streams by `guardStream`
 * for the answer's event format. Every run is recorded on the request.
 */
export async function guardAnswer<B extends object>(
  request: GatewayRequest,
  operation: TextOperation,
  body: B,
  raw: Buffer | undefined,
  facts: CheckFacts,
  guardStream: (events: AsyncIterable<Uint8Array>, options: GuardStreamOptions) => AsyncIterable<Uint8Array>,
): Promise<AnswerGuardrails<B>> {
  const guardrails = await request.guardrails();
  const webhooks = request.webhookContext();
  let sent = body;
  let bytes = raw;
  if (guardrails && guardrails.input.length > 0) {
    const checked = await checkInput(
      guardrails.input,
      body,
      (b) => requestTexts(operation, b as Record<string, unknown>),
      facts,
      request.guardrailRuns,
      webhooks,
    );
    if (checked.redacted) {
      // The provider gets the redacted texts, never the client's bytes.
      sent = checked.body;
      bytes = undefined;
    }
  }
  const output = guardrails?.output ?? [];
  return {
    body: sent,
    raw: bytes,
    output,
    async checkAnswer(answer, status) {
      if (output.length === 0 || status >= 300) return answer;
      const units = (json: Record<string, unknown>) => answerUnits(operation, json);
      const checked = await checkOutput(output, answer, units, facts, status, webhooks);
      request.guardrailRuns.push(...checked.runs);
      return checked.body;
    },
    checkStream(events, status) {
      if (output.length === 0 || status >= 300) return events;
      return guardStream(events, {
        guardrails: output,
        request: facts,
        runs: request.guardrailRuns,
        webhooks,
      });
    },
  };
}
