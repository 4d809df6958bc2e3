import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Logger } from '@switchyard/core';
import type { ExportFileStore, ExportFileWriter } from '../files/export-files.ts';
import type { RequestLog } from '../store/entities.ts';
import type { Feedback, FeedbackRepository } from '../store/feedback.repository.ts';
import type { ExportClaim, LogExport, LogExportRepository } from '../store/log-export.repository.ts';
import type { RequestLogKey, RequestLogSearch } from '../store/request-log.search.ts';
import { exportFileKey, filterOf } from './log-exports.ts';

/** One exported log as a line of JSON (without its newline), holding the fields asked for in their order. */
export type ExportLine = (log: RequestLog, feedback: Feedback[], fields: readonly string[]) => string;

export interface ExportRunnerOptions {
  repo: Pick<LogExportRepository, 'claim' | 'progress' | 'succeed' | 'fail' | 'release'>;
  search: Pick<RequestLogSearch, 'pageWithBodies'>;
  feedback: Pick<FeedbackRepository, 'forTraces'>;
  files: ExportFileStore;
  line: ExportLine;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** This process, as the exports it holds name it. */
  runner?: string;
  /** How long a hold lasts unless renewed (each batch renews it): how soon another process takes over from one that died. */
  leaseMs?: number;
  /** How often to look for exports to run that nobody holds. */
  pollMs?: number;
  /** Logs read and written at a time. */
  batchSize?: number;
}

/**
 * Runs started exports, one at a time per process: reads the logs newest first in batches,
 * writes them as JSON Lines to the file store, and records progress after each batch. Progress
 * also renews the process's hold on the export, and tells it when the export was cancelled or
 * taken over. An export whose process died is taken over once its hold runs out and run again
 * from its start; the file becomes visible only when whole.
 */
export class ExportRunner {
  readonly runner: string;
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private readonly batchSize: number;
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<void> | undefined;
  private again = false;
  private stopping = false;

  constructor(private readonly options: ExportRunnerOptions) {
    this.runner = options.runner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.pollMs = options.pollMs ?? 5_000;
    this.batchSize = options.batchSize ?? 1_000;
  }

  start(): void {
    this.stopping = false;
    this.timer = setInterval(() => this.kick(), this.pollMs);
    this.timer.unref();
    this.kick();
  }

  /** Looks for exports to run now; a look while one runs happens when it ends. */
  kick(): void {
    if (this.stopping) return;
    if (this.current) {
      this.again = true;
      return;
    }
    this.current = this.drain()
      .catch((err: unknown) => {
        this.options.logger.error('log export runner failed', { error: String(err) });
      })
      .finally(() => {
        this.current = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** Resolves when the runner has nothing to do (for tests and shutdown). */
  async idle(): Promise<void> {
    while (this.current) await this.current;
  }

  /** Stops taking exports, ends the one running at its next batch, and lets go of it so another process takes it over at once. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    await this.idle();
    await this.options.repo.release(this.runner);
  }

  private async drain(): Promise<void> {
    for (;;) {
      if (this.stopping) return;
      const record = await this.options.repo.claim(this.runner, this.leaseMs);
      if (!record) return;
      await this.run(record);
    }
  }

  private async run(record: LogExport): Promise<void> {
    const { logger, files } = this.options;
    const claim: ExportClaim = { id: record.id, run: record.run, runner: this.runner };
    const began = Date.now();
    const fileKey = exportFileKey(record);
    // The logs of the range up to the moment it was started: a run taken over exports the same ones.
    const filter = filterOf(record, record.startedAt ?? record.createdAt);
    const withFeedback = record.requestedData.includes('feedback');
    logger.info('log export started', { export_id: record.id, run: record.run, runner: this.runner });
    let writer: ExportFileWriter | undefined;
    try {
      writer = await files.create(fileKey);
      let after: RequestLogKey | undefined;
      let exported = 0;
      for (;;) {
        if (this.stopping) {
          await writer.abort();
          logger.info('log export handed over', { export_id: record.id, exported });
          return;
        }
        const rows = await this.options.search.pageWithBodies(filter, after, this.batchSize);
        if (rows.length === 0) break;
        const feedback = withFeedback ? await this.feedbackOf(record, rows) : undefined;
        let chunk = '';
        for (const row of rows) {
          const onTrace = row.traceId === null ? [] : (feedback?.get(row.traceId) ?? []);
          chunk += `${this.options.line(row, onTrace, record.requestedData)}\n`;
        }
        await writer.write(chunk);
        exported += rows.length;
        after = rows.at(-1)!.key;
        if (!(await this.options.repo.progress(claim, exported, this.leaseMs))) {
          // Cancelled, started again, or taken over after this process lost its hold.
          await writer.abort();
          logger.info('log export no longer ours', { export_id: record.id, exported });
          return;
        }
        if (rows.length < this.batchSize) break;
      }
      const { bytes } = await writer.finish();
      writer = undefined;
      if (await this.options.repo.succeed(claim, { exported, bytes, fileKey })) {
        logger.info('log export finished', { export_id: record.id, exported, bytes, ms: Date.now() - began });
      }
    } catch (err) {
      await writer?.abort().catch(() => undefined);
      logger.error('log export failed', { export_id: record.id, error: String(err) });
      await this.options.repo
        .fail(claim, 'The export could not be written; start it again.')
        .catch((failErr: unknown) =>
          logger.error('log export failure not recorded', { error: String(failErr) }),
        );
    }
  }

  /** The feedback on the traces of a batch, each log seeing its workspace's and the organisation's own. */
  private async feedbackOf(record: LogExport, rows: readonly RequestLog[]): Promise<Map<string, Feedback[]>> {
    const traces = [...new Set(rows.flatMap((row) => (row.traceId === null ? [] : [row.traceId])))];
    if (traces.length === 0) return new Map();
    const all = await this.options.feedback.forTraces(
      record.organisationId,
      traces,
      record.workspaceId ?? undefined,
    );
    const visible = new Map<string, Feedback[]>();
    for (const row of rows) {
      if (row.traceId === null || visible.has(row.traceId)) continue;
      visible.set(
        row.traceId,
        (all.get(row.traceId) ?? []).filter(
          (f) => f.workspaceId === null || f.workspaceId === row.workspaceId,
        ),
      );
    }
    return visible;
  }
}
