import type { CallerRules, ServiceHandlers } from '@switchyard/runtime';
import type { policy } from '@switchyard/proto';
import type { UsageLedger } from '../domain/usage-ledger.ts';

/** Per-entity usage is read and reset through the management API only. */
export const usageLedgerCallers: CallerRules<typeof policy.UsageLedgerService> = {
  listUsage: ['control-plane'],
  resetUsage: ['control-plane'],
  keyUsage: ['control-plane'],
};

export function usageLedgerHandlers(ledger: UsageLedger): ServiceHandlers<typeof policy.UsageLedgerService> {
  return {
    listUsage: (request) => ledger.list(request),
    resetUsage: (request) => ledger.reset(request),
    keyUsage: (request) => ledger.keyUsage(request),
  };
}
