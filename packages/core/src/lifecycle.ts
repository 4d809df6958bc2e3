import type { Logger } from './logger.ts';

type Closer = { name: string; close: () => Promise<void> | void };

/**
 * Ordered shutdown: closers run in reverse registration order (servers first, then
 * producers, then pools), each bounded so that one stuck dependency cannot hold the rest.
 */
export class Lifecycle {
  private readonly closers: Closer[] = [];
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly logger: Logger,
    private readonly graceMs: number,
  ) {}

  onStop(name: string, close: Closer['close']): void {
    this.closers.push({ name, close });
  }

  get isStopping(): boolean {
    return this.stopping !== undefined;
  }

  stop(reason: string): Promise<void> {
    this.stopping ??= (async () => {
      this.logger.info('shutting down', { reason });
      for (const closer of [...this.closers].reverse()) {
        let timer: NodeJS.Timeout | undefined;
        try {
          await Promise.race([
            Promise.resolve().then(closer.close),
            new Promise((_, reject) => {
              timer = setTimeout(() => reject(new Error('timed out')), this.graceMs);
            }),
          ]);
        } catch (err) {
          this.logger.warn('shutdown step failed', { step: closer.name, error: String(err) });
        } finally {
          clearTimeout(timer);
        }
      }
      this.logger.info('stopped');
    })();
    return this.stopping;
  }

  /** SIGTERM/SIGINT start a graceful stop; a second signal exits at once. */
  handleSignals(): void {
    let signalled = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (signalled) process.exit(1);
      signalled = true;
      void this.stop(signal).then(() => process.exit(0));
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  }
}
