import type { Logger } from '@switchyard/core';
import type { McpIntegrationService } from './mcp-integration.service.ts';

/** How often a replica looks for integrations due a sync; each is claimed by one replica only. */
const TICK_MS = 30_000;

/**
 * Reads every MCP integration's capabilities again each MCP_SYNC_INTERVAL_SECONDS (0: never).
 * Each replica ticks; the integrations due are claimed atomically, so two replicas never sync
 * the same one at once.
 */
export class McpSyncSchedule {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(
    private readonly integrations: Pick<McpIntegrationService, 'syncDue'>,
    private readonly intervalSeconds: number,
    private readonly logger?: Pick<Logger, 'error'>,
    private readonly tickMs = Math.min(TICK_MS, Math.max(1_000, intervalSeconds * 1000)),
  ) {}

  start(): void {
    if (this.intervalSeconds <= 0 || this.timer) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.integrations
        .syncDue()
        .catch((err: unknown) => this.logger?.error('the MCP capability sync failed', { error: String(err) }))
        .finally(() => {
          this.running = undefined;
        });
    }, this.tickMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
