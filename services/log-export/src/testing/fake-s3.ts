import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback } from '@switchyard/testing';

export interface FakeS3Object {
  body: Buffer;
  contentType: string | undefined;
  etag: string;
}

export interface FakeS3Upload {
  key: string;
  contentType: string | undefined;
  parts: Map<number, { body: Buffer; etag: string }>;
}

export interface FakeS3 {
  /** The endpoint, to be addressed path-style (`<url>/<bucket>/<key>`). */
  url: string;
  bucket: string;
  /** The objects of the bucket by key. */
  objects: Map<string, FakeS3Object>;
  /** Multipart uploads begun and neither completed nor aborted, by upload id. */
  uploads: Map<string, FakeS3Upload>;
  /** Each request as method and path with its query, in order. */
  requests: { method: string; path: string }[];
  /** While set, parts of multipart uploads are taken but not answered (a slow bucket); clearing it answers them. */
  holdParts: boolean;
  /** Parts taken and not yet answered while `holdParts` is set. */
  readonly heldParts: number;
  close(): Promise<void>;
}

/** S3 refuses a part smaller than this unless it is the last. */
const MIN_PART_BYTES = 5 * 1024 * 1024;

/**
 * An S3-compatible server on 127.0.0.1 holding one bucket in memory: objects (PutObject,
 * GetObject, HeadObject, DeleteObject) and multipart uploads, with S3's XML errors. A request
 * must be signed (an `Authorization` header, or a presigned URL's query) but the signature is
 * not checked; a presigned URL past its `X-Amz-Date` + `X-Amz-Expires` by `now` is refused.
 */
export async function startFakeS3(options: { bucket?: string; now?: () => number } = {}): Promise<FakeS3> {
  const bucket = options.bucket ?? 'exports';
  const now = options.now ?? Date.now;
  let hold = false;
  const held: (() => void)[] = [];
  const state: FakeS3 = {
    url: '',
    bucket,
    objects: new Map(),
    uploads: new Map(),
    requests: [],
    get holdParts() {
      return hold;
    },
    set holdParts(on: boolean) {
      hold = on;
      if (!on) for (const answer of held.splice(0)) answer();
    },
    get heldParts() {
      return held.length;
    },
    close: async () => {},
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      state.requests.push({ method: req.method ?? '', path: req.url ?? '' });
      try {
        handle(req, res, Buffer.concat(chunks));
      } catch (err) {
        s3Error(res, 500, 'InternalError', String(err));
      }
    });
  });

  function handle(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const query = url.searchParams;
    const [bucketName = '', ...keyParts] = url.pathname.slice(1).split('/').map(decodeURIComponent);
    const key = keyParts.join('/');
    const method = req.method ?? '';

    const denied = authorizationProblem(req, query);
    if (denied) return s3Error(res, 403, 'AccessDenied', denied);
    if (bucketName !== bucket)
      return s3Error(res, 404, 'NoSuchBucket', 'The specified bucket does not exist.');
    if (key === '') return s3Error(res, 501, 'NotImplemented', 'Only object operations are implemented.');
    if (/aws-chunked/.test(req.headers['content-encoding'] ?? '')) {
      return s3Error(res, 501, 'NotImplemented', 'aws-chunked bodies are not implemented.');
    }
    const uploadId = query.get('uploadId');

    if (method === 'POST' && query.has('uploads')) {
      const id = randomUUID();
      state.uploads.set(id, { key, contentType: req.headers['content-type'], parts: new Map() });
      return xml(
        res,
        200,
        `<InitiateMultipartUploadResult><Bucket>${bucket}</Bucket><Key>${escapeXml(key)}</Key><UploadId>${id}</UploadId></InitiateMultipartUploadResult>`,
      );
    }
    if (uploadId !== null) {
      const upload = state.uploads.get(uploadId);
      if (!upload || upload.key !== key) {
        return s3Error(res, 404, 'NoSuchUpload', 'The specified multipart upload does not exist.');
      }
      if (method === 'PUT') {
        const partNumber = Number(query.get('partNumber'));
        if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > 10_000) {
          return s3Error(res, 400, 'InvalidArgument', 'Part number must be an integer between 1 and 10000.');
        }
        const etag = etagOf(body);
        const answer = () => {
          upload.parts.set(partNumber, { body, etag });
          res.writeHead(200, { ETag: etag }).end();
        };
        if (hold) held.push(answer);
        else answer();
        return;
      }
      if (method === 'POST') return completeUpload(res, uploadId, upload, body.toString('utf8'));
      if (method === 'DELETE') {
        state.uploads.delete(uploadId);
        res.writeHead(204).end();
        return;
      }
      return s3Error(
        res,
        405,
        'MethodNotAllowed',
        'The specified method is not allowed against this resource.',
      );
    }

    switch (method) {
      case 'PUT': {
        if (req.headers['x-amz-copy-source'])
          return s3Error(res, 501, 'NotImplemented', 'Copies are not implemented.');
        const etag = etagOf(body);
        state.objects.set(key, { body, contentType: req.headers['content-type'], etag });
        res.writeHead(200, { ETag: etag }).end();
        return;
      }
      case 'GET':
      case 'HEAD': {
        const object = state.objects.get(key);
        if (!object) {
          if (method === 'HEAD') {
            res.writeHead(404).end();
            return;
          }
          return s3Error(res, 404, 'NoSuchKey', 'The specified key does not exist.', key);
        }
        res.writeHead(200, {
          'Content-Length': object.body.length,
          'Content-Type': query.get('response-content-type') ?? object.contentType ?? 'binary/octet-stream',
          ...(query.has('response-content-disposition')
            ? { 'Content-Disposition': query.get('response-content-disposition')! }
            : {}),
          ETag: object.etag,
        });
        res.end(method === 'GET' ? object.body : undefined);
        return;
      }
      case 'DELETE':
        state.objects.delete(key);
        res.writeHead(204).end();
        return;
      default:
        return s3Error(
          res,
          405,
          'MethodNotAllowed',
          'The specified method is not allowed against this resource.',
        );
    }
  }

  function completeUpload(res: ServerResponse, uploadId: string, upload: FakeS3Upload, body: string): void {
    const listed = [...body.matchAll(/<Part>([\s\S]*?)<\/Part>/g)].map(([, part = '']) => ({
      number: Number(/<PartNumber>(\d+)<\/PartNumber>/.exec(part)?.[1]),
      etag: unescapeXml(/<ETag>([^<]*)<\/ETag>/.exec(part)?.[1] ?? ''),
    }));
    if (listed.length === 0)
      return s3Error(res, 400, 'MalformedXML', 'The XML you provided was not well-formed.');
    const bodies: Buffer[] = [];
    for (const [index, part] of listed.entries()) {
      if (index > 0 && part.number <= listed[index - 1]!.number) {
        return s3Error(res, 400, 'InvalidPartOrder', 'The list of parts was not in ascending order.');
      }
      const held = upload.parts.get(part.number);
      if (!held || held.etag !== part.etag) {
        return s3Error(res, 400, 'InvalidPart', 'One or more of the specified parts could not be found.');
      }
      if (index < listed.length - 1 && held.body.length < MIN_PART_BYTES) {
        return s3Error(
          res,
          400,
          'EntityTooSmall',
          'Your proposed upload is smaller than the minimum allowed size.',
        );
      }
      bodies.push(held.body);
    }
    const whole = Buffer.concat(bodies);
    const etag = `"${createHash('md5').update(whole).digest('hex')}-${listed.length}"`;
    state.objects.set(upload.key, { body: whole, contentType: upload.contentType, etag });
    state.uploads.delete(uploadId);
    xml(
      res,
      200,
      `<CompleteMultipartUploadResult><Location>${state.url}/${bucket}/${escapeXml(upload.key)}</Location><Bucket>${bucket}</Bucket><Key>${escapeXml(upload.key)}</Key><ETag>${escapeXml(etag)}</ETag></CompleteMultipartUploadResult>`,
    );
  }

  /** Why a request is refused before anything else, or undefined when it may go on. */
  function authorizationProblem(req: IncomingMessage, query: URLSearchParams): string | undefined {
    const presigned =
      query.has('X-Amz-Algorithm') || query.has('X-Amz-Credential') || query.has('X-Amz-Signature');
    if (!presigned) {
      return req.headers.authorization?.startsWith('AWS4-HMAC-SHA256 ')
        ? undefined
        : 'The request is not signed.';
    }
    if (!query.get('X-Amz-Signature'))
      return 'Query-string authentication requires the X-Amz-Signature parameter.';
    const date = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(query.get('X-Amz-Date') ?? '');
    const expires = Number(query.get('X-Amz-Expires'));
    if (!date || !Number.isInteger(expires) || expires < 1 || expires > 604_800) {
      return 'X-Amz-Date and X-Amz-Expires must be present and valid.';
    }
    const [, y, mo, d, h, mi, s] = date.map(Number) as [
      number,
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    const signedAt = Date.UTC(y, mo - 1, d, h, mi, s);
    if (now() > signedAt + expires * 1000) return 'Request has expired';
    return undefined;
  }

  Object.assign(state, await listenOnLoopback(server));
  return state;
}

function s3Error(res: ServerResponse, status: number, code: string, message: string, key?: string): void {
  xml(
    res,
    status,
    `<Error><Code>${code}</Code><Message>${escapeXml(message)}</Message>${key === undefined ? '' : `<Key>${escapeXml(key)}</Key>`}<RequestId>${randomUUID()}</RequestId></Error>`,
  );
}

function xml(res: ServerResponse, status: number, body: string): void {
  const text = `<?xml version="1.0" encoding="UTF-8"?>\n${body}`;
  res
    .writeHead(status, { 'Content-Type': 'application/xml', 'Content-Length': Buffer.byteLength(text) })
    .end(text);
}

function etagOf(body: Buffer): string {
  return `"${createHash('md5').update(body).digest('hex')}"`;
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function unescapeXml(text: string): string {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}
