export {
  DEFAULT_CHECK_TIMEOUT_MS,
  DEFAULT_WEBHOOK_TIMEOUT_MS,
  GUARDRAIL_CHECK_IDS,
  MAX_CHECK_TIMEOUT_MS,
  MAX_CHECKS,
  parseGuardrailActions,
  parseGuardrailChecks,
  type CheckFailureMode,
  type GuardrailActions,
  type GuardrailCheck,
  type GuardrailCheckId,
} from './definitions.ts';
