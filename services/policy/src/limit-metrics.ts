import type { Registry } from 'prom-client';
import { counterOnce, histogramOnce } from '@switchyard/core';
import type { LimitObserver } from './domain/limit-enforcer.ts';

/** The policy service's series on the process's registry (one registry in all-in-one mode). */
export function limitMetrics(registry: Registry): LimitObserver {
  const decisions = counterOnce(registry, {
    name: 'switchyard_policy_decisions_total',
    help: 'Limit checks and stream extensions decided, by decision (allow, deny, skip: no policy can apply to the key) and code.',
    labelNames: ['decision', 'code'],
  });
  const failureModes = counterOnce(registry, {
    name: 'switchyard_policy_failure_mode_decisions_total',
    help: 'Decisions a failure mode made because the limit counters (Redis) or the policy directory were unreachable, by policy kind and mode.',
    labelNames: ['kind', 'mode'],
  });
  const storeDuration = histogramOnce(registry, {
    name: 'switchyard_policy_store_duration_seconds',
    help: 'Round trips to the limit counters, by operation (take, settle), failures included.',
    labelNames: ['operation'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
  });
  return {
    decision: (decision, code) => decisions.inc({ decision, code }),
    failureMode: (kind, mode) => failureModes.inc({ kind, mode }),
    storeSeconds: (operation, seconds) => storeDuration.observe({ operation }, seconds),
  };
}
