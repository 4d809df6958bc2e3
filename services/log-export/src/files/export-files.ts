import type { Readable } from 'node:stream';

/*
 * Where finished log exports are kept: a local volume by default, an S3-compatible bucket by
 * setting. A file is written once, as the export runs, and becomes visible under its key only
 * when it is whole: a reader never sees half an export.
 */

/** One file being written; exactly one of `finish` or `abort` ends it. */
export interface ExportFileWriter {
  /** Appends one chunk; resolves when the writer can take the next (so a slow store slows the export, not memory). */
  write(chunk: string): Promise<void>;
  /** Makes the file whole and visible under its key, replacing an earlier file of that key; answers its size. */
  finish(): Promise<{ bytes: number }>;
  /** Drops what was written; the key keeps whatever file it had before. Safe to call after a failed write. */
  abort(): Promise<void>;
}

/** A stored file opened for reading. */
export interface ExportFile {
  stream: Readable;
  bytes: number;
}

export interface ExportFileStore {
  readonly kind: 'local' | 's3';
  /** Starts a file under `key` (letters, digits, `-`, `_`, `.` and `/`, no `..`). */
  create(key: string): Promise<ExportFileWriter>;
  /** The whole file of `key`, or null when there is none. */
  open(key: string): Promise<ExportFile | null>;
  /**
   * A link that downloads the file of `key` as `filename`, valid for `expiresInSeconds`, when
   * the store can sign one itself (a bucket); null when downloads go through log-export (a volume).
   */
  signedUrl(key: string, filename: string, expiresInSeconds: number): Promise<string | null>;
  /** Removes the file of `key`; no error when there is none. */
  delete(key: string): Promise<void>;
}
