import { Writable } from 'node:stream';
import winston from 'winston';
import { createLogger, type Logger } from '../logger.ts';

export interface CapturedLogger {
  logger: Logger;
  /** Every line written so far, as parsed JSON objects. */
  lines(): Array<Record<string, unknown>>;
  /** Every line written so far, exactly as it would reach stdout. */
  text(): string;
}

/**
 * A logger built by `createLogger` (so with the production formats) whose output goes to
 * memory instead of stdout.
 */
export function captureLogger(service = 'test', level = 'debug'): CapturedLogger {
  const logger = createLogger(service, level);
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      chunks.push(chunk.toString());
      callback();
    },
  });
  logger.clear();
  logger.add(new winston.transports.Stream({ stream }));
  const text = () => chunks.join('');
  return {
    logger,
    text,
    lines: () =>
      text()
        .split('\n')
        .filter((line) => line.trim().length > 0)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

/** Lets winston's stream pipeline deliver what was logged synchronously. */
export function settleLogs(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
