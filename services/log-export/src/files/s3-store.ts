import { once } from 'node:events';
import { PassThrough, type Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { ExportFile, ExportFileStore, ExportFileWriter } from './export-files.ts';
import { assertExportKey } from './local-store.ts';

export interface S3ExportFileStoreOptions {
  bucket: string;
  region: string;
  /** An S3-compatible store's address (MinIO, R2, …); AWS S3 when absent. */
  endpoint?: string;
  /** Names the bucket in the path rather than the host name. */
  forcePathStyle?: boolean;
  /** Put before every key, as a folder (`exports` keeps `org/id.jsonl` as `exports/org/id.jsonl`). */
  prefix?: string;
  /** The SDK's own chain (environment, profile, workload identity) when absent. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** How long one request may take to be answered, and a connection may stay silent. */
  timeoutMs?: number;
}

/** Parts of a large file; at most this much per part, times `QUEUE_SIZE`, is held in memory. */
const PART_BYTES = 8 * 1024 * 1024;
const QUEUE_SIZE = 2;

/**
 * Finished exports as objects in an S3-compatible bucket. A file is sent as it is written (a
 * multipart upload once it outgrows one part) and the object appears only when the upload
 * completes; downloads are the bucket's own presigned links.
 */
export class S3ExportFileStore implements ExportFileStore {
  readonly kind = 's3' as const;
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly timeoutMs: number;

  constructor(options: S3ExportFileStoreOptions) {
    this.bucket = options.bucket;
    const prefix = (options.prefix ?? '').replace(/^\/+|\/+$/g, '');
    this.prefix = prefix === '' ? '' : `${prefix}/`;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.client = new S3Client({
      region: options.region,
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      forcePathStyle: options.forcePathStyle ?? false,
      ...(options.credentials ? { credentials: options.credentials } : {}),
      // No request waits without a deadline: for its answer, for a connection, for a silent socket.
      requestHandler: {
        connectionTimeout: Math.min(this.timeoutMs, 10_000),
        requestTimeout: this.timeoutMs,
        throwOnRequestTimeout: true,
        socketTimeout: this.timeoutMs,
      },
      // Many S3-compatible stores reject the checksums AWS S3 takes by default; send them only where required.
      ...(options.endpoint
        ? ({
            requestChecksumCalculation: 'WHEN_REQUIRED',
            responseChecksumValidation: 'WHEN_REQUIRED',
          } as const)
        : {}),
    });
  }

  async create(key: string): Promise<ExportFileWriter> {
    return new S3Writer(this.client, this.bucket, this.objectKey(key));
  }

  async open(key: string): Promise<ExportFile | null> {
    try {
      const answer = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }),
      );
      return { stream: answer.Body as Readable, bytes: answer.ContentLength ?? 0 };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async signedUrl(key: string, filename: string, expiresInSeconds: number): Promise<string | null> {
    const command = new GetObjectCommand({
      Bucket: this.bucket,
      Key: this.objectKey(key),
      ResponseContentDisposition: `attachment; filename="${filename.replace(/[^\x20-\x7e]|["\\]/g, '_')}"`,
      ResponseContentType: 'application/x-ndjson',
    });
    return getSignedUrl(this.client, command, { expiresIn: expiresInSeconds });
  }

  async delete(key: string): Promise<void> {
    // Deleting an object that is not there succeeds in S3.
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
  }

  /** Ends the client's connections (for tests and shutdown). */
  close(): void {
    this.client.destroy();
  }

  private objectKey(key: string): string {
    assertExportKey(key);
    return `${this.prefix}${key}`;
  }
}

class S3Writer implements ExportFileWriter {
  private readonly body = new PassThrough();
  private readonly upload: Promise<void>;
  /** Aborted when the upload fails, to wake a write waiting for room. */
  private readonly failed = new AbortController();
  private failure: unknown;
  private bytes = 0;
  private state: 'writing' | 'finishing' | 'finished' | 'aborted' = 'writing';

  constructor(client: S3Client, bucket: string, key: string) {
    // Ending the upload is what destroying the body does; its error reaches the upload, not the process.
    this.body.on('error', () => undefined);
    const upload = new Upload({
      client,
      params: { Bucket: bucket, Key: key, Body: this.body, ContentType: 'application/x-ndjson' },
      partSize: PART_BYTES,
      queueSize: QUEUE_SIZE,
      // A failed or aborted multipart upload is aborted in the bucket too, leaving no parts behind.
      leavePartsOnError: false,
    });
    this.upload = upload.done().then(
      () => undefined,
      (err: unknown) => {
        this.failure ??= err;
        this.failed.abort();
        throw err;
      },
    );
    this.upload.catch(() => undefined);
  }

  async write(chunk: string): Promise<void> {
    if (this.state !== 'writing') throw new Error(`The export file was already ${this.state}.`);
    if (this.failure !== undefined) throw this.failure;
    this.bytes += Buffer.byteLength(chunk);
    if (this.body.write(chunk)) return;
    try {
      await once(this.body, 'drain', { signal: this.failed.signal });
    } catch (err) {
      throw this.failure ?? err;
    }
  }

  async finish(): Promise<{ bytes: number }> {
    if (this.state !== 'writing') throw new Error(`The export file was already ${this.state}.`);
    this.state = 'finishing';
    this.body.end();
    await this.upload;
    this.state = 'finished';
    return { bytes: this.bytes };
  }

  async abort(): Promise<void> {
    if (this.state === 'finished' || this.state === 'aborted') return;
    this.state = 'aborted';
    // The upload fails on the body's error: it sends no object, and aborts a multipart upload it began.
    this.body.destroy(new Error('The export file was aborted.'));
    await this.upload.catch(() => undefined);
  }
}

function isNotFound(err: unknown): boolean {
  if (!(err instanceof S3ServiceException)) return false;
  // A missing bucket is a 404 too, but a setting to fix rather than a file that is not there.
  return err.name === 'NoSuchKey' || (err.$metadata.httpStatusCode === 404 && err.name !== 'NoSuchBucket');
}
