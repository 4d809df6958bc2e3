import { randomBytes } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { once } from 'node:events';
import { basename, dirname, join, resolve, sep } from 'node:path';
import type { ExportFile, ExportFileStore, ExportFileWriter } from './export-files.ts';

/** The suffix of a file still being written; no key may end with it, so such a file is never opened. */
const PARTIAL = '.partial';

/** A file being written that has not grown for this long belongs to a process that died. */
const STALE_PARTIAL_MS = 60 * 60 * 1000;

/**
 * Refuses a key that is not a plain relative path of the allowed characters. Keys come from
 * log-export's own code; this keeps a wrong one from reaching outside the store's folder.
 */
export function assertExportKey(key: string): void {
  const plain =
    key.length > 0 &&
    key.length <= 512 &&
    /^[A-Za-z0-9._/-]+$/.test(key) &&
    !key.endsWith(PARTIAL) &&
    key.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..');
  if (!plain) throw new Error(`Not a valid export file key: ${JSON.stringify(key)}`);
}

/**
 * Finished exports as files under one folder (a volume that outlives the process). A file is
 * written beside its target as `<key>.<random>.partial` and renamed over the target when whole,
 * so a reader sees the old file or the new one, never part of one.
 */
export class LocalExportFileStore implements ExportFileStore {
  readonly kind = 'local' as const;
  private readonly root: string;

  constructor(directory: string) {
    this.root = resolve(directory);
  }

  async create(key: string): Promise<ExportFileWriter> {
    const target = this.pathOf(key);
    await mkdir(dirname(target), { recursive: true });
    await this.removeStalePartials(target);
    const temporary = `${target}.${randomBytes(6).toString('hex')}${PARTIAL}`;
    const stream = createWriteStream(temporary, { flags: 'wx', mode: 0o640, flush: true });
    await once(stream, 'open');
    return new LocalWriter(stream, temporary, target);
  }

  async open(key: string): Promise<ExportFile | null> {
    const path = this.pathOf(key);
    let handle: FileHandle;
    try {
      handle = await open(path, 'r');
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
    // Read through the handle opened above: a file renamed over the key meanwhile does not change what is read.
    const info = await handle.stat().catch(async (err: unknown) => {
      await handle.close();
      throw err;
    });
    if (!info.isFile()) {
      await handle.close();
      return null;
    }
    return { stream: handle.createReadStream(), bytes: info.size };
  }

  async signedUrl(): Promise<string | null> {
    return null;
  }

  async delete(key: string): Promise<void> {
    try {
      await unlink(this.pathOf(key));
    } catch (err) {
      if (!isMissing(err)) throw err;
    }
  }

  private pathOf(key: string): string {
    assertExportKey(key);
    const path = resolve(this.root, key);
    if (!path.startsWith(this.root + sep))
      throw new Error(`Not a valid export file key: ${JSON.stringify(key)}`);
    return path;
  }

  /** Removes the files a killed process left while writing `target`, so they do not fill the volume. */
  private async removeStalePartials(target: string): Promise<void> {
    const folder = dirname(target);
    const prefix = `${basename(target)}.`;
    const names = await readdir(folder).catch(() => [] as string[]);
    const before = Date.now() - STALE_PARTIAL_MS;
    for (const name of names) {
      if (!name.startsWith(prefix) || !/^[0-9a-f]{12}\.partial$/.test(name.slice(prefix.length))) continue;
      const path = join(folder, name);
      const info = await stat(path).catch(() => undefined);
      if (info && info.mtimeMs < before) await unlink(path).catch(() => undefined);
    }
  }
}

class LocalWriter implements ExportFileWriter {
  private failure: Error | undefined;
  private state: 'writing' | 'finished' | 'aborted' = 'writing';

  constructor(
    private readonly stream: WriteStream,
    private readonly temporary: string,
    private readonly target: string,
  ) {
    this.stream.on('error', (err) => {
      this.failure ??= err;
    });
  }

  async write(chunk: string): Promise<void> {
    this.assertWriting();
    if (this.stream.write(chunk)) return;
    try {
      await once(this.stream, 'drain');
    } catch (err) {
      throw this.failure ?? err;
    }
  }

  async finish(): Promise<{ bytes: number }> {
    this.assertWriting();
    try {
      // The stream syncs the file to disk before it closes (`flush`), so the rename never publishes a file still in memory.
      this.stream.end();
      await once(this.stream, 'close');
    } catch (err) {
      throw this.failure ?? err;
    }
    if (this.failure) throw this.failure;
    await rename(this.temporary, this.target);
    this.state = 'finished';
    // The rename itself lasts once the folder is synced; a failure here leaves the file in place.
    await syncFolder(dirname(this.target)).catch(() => undefined);
    return { bytes: this.stream.bytesWritten };
  }

  async abort(): Promise<void> {
    if (this.state !== 'writing') return;
    this.state = 'aborted';
    if (!this.stream.closed) {
      this.stream.destroy();
      await once(this.stream, 'close').catch(() => undefined);
    }
    await unlink(this.temporary).catch((err: unknown) => {
      if (!isMissing(err)) throw err;
    });
  }

  private assertWriting(): void {
    if (this.state !== 'writing') throw new Error(`The export file was already ${this.state}.`);
    if (this.failure) throw this.failure;
  }
}

async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
