import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, stat, utimes, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { startFakeS3, type FakeS3 } from '../testing/fake-s3.ts';
import type { ExportFileStore } from './export-files.ts';
import { LocalExportFileStore } from './local-store.ts';
import { S3ExportFileStore } from './s3-store.ts';

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

async function contentOf(
  store: ExportFileStore,
  key: string,
): Promise<{ text: string; bytes: number } | null> {
  const file = await store.open(key);
  if (!file) return null;
  const body = await readAll(file.stream);
  assert.equal(body.length, file.bytes, 'the size told is the size read');
  return { text: body.toString('utf8'), bytes: file.bytes };
}

async function put(store: ExportFileStore, key: string, chunks: string[]): Promise<{ bytes: number }> {
  const writer = await store.create(key);
  for (const chunk of chunks) await writer.write(chunk);
  return writer.finish();
}

/** `count` lines of JSON of about 1 KB each, numbered from `from`. */
function lines(count: number, from = 0): string[] {
  return Array.from(
    { length: count },
    (_, i) => `${JSON.stringify({ n: from + i, pad: 'x'.repeat(1000) })}\n`,
  );
}

interface Subject {
  store: ExportFileStore;
  /** What the store holds besides finished files: temporary files, unfinished uploads. */
  leftovers(): Promise<string[]>;
  close(): Promise<void>;
}

const subjects: { name: string; start(): Promise<Subject> }[] = [
  {
    name: 'local volume',
    async start() {
      const directory = await mkdtemp(join(tmpdir(), 'export-files-'));
      const store = new LocalExportFileStore(directory);
      return {
        store,
        leftovers: async () =>
          (await readdir(directory, { recursive: true })).filter((name) => name.endsWith('.partial')),
        close: () => rm(directory, { recursive: true, force: true }),
      };
    },
  },
  {
    name: 'S3 bucket',
    async start() {
      const fake = await startFakeS3();
      const store = new S3ExportFileStore({
        bucket: fake.bucket,
        region: 'us-east-1',
        endpoint: fake.url,
        forcePathStyle: true,
        credentials: { accessKeyId: 'test-key', secretAccessKey: 'test-secret' },
      });
      return {
        store,
        leftovers: async () => [...fake.uploads.values()].map((upload) => `upload of ${upload.key}`),
        close: async () => {
          store.close();
          await fake.close();
        },
      };
    },
  },
];

for (const subject of subjects) {
  describe(`export files on a ${subject.name}`, () => {
    let s: Subject;
    before(async () => {
      s = await subject.start();
    });
    after(() => s.close());

    test('chunks written then finished are read back byte for byte, with their size', async () => {
      const chunks = ['{"model":"gpt-4o","text":"héllo — ✓"}\n', ...lines(50), '{"last":true}\n'];
      const expected = chunks.join('');
      const { bytes } = await put(s.store, 'org-1/export-1.jsonl', chunks);
      assert.equal(bytes, Buffer.byteLength(expected));
      assert.deepEqual(await contentOf(s.store, 'org-1/export-1.jsonl'), { text: expected, bytes });
      assert.deepEqual(await s.leftovers(), []);
    });

    test('a file is not there under its key until it is finished', async () => {
      const writer = await s.store.create('org-1/export-2.jsonl');
      await writer.write(lines(3).join(''));
      assert.equal(await s.store.open('org-1/export-2.jsonl'), null);
      await writer.write(lines(3, 3).join(''));
      assert.equal(await s.store.open('org-1/export-2.jsonl'), null);
      await writer.finish();
      assert.equal((await contentOf(s.store, 'org-1/export-2.jsonl'))?.text, lines(6).join(''));
    });

    test('an aborted file leaves nothing, and the key keeps the file it had', async () => {
      const fresh = await s.store.create('org-1/export-3.jsonl');
      await fresh.write(lines(5).join(''));
      await fresh.abort();
      assert.equal(await s.store.open('org-1/export-3.jsonl'), null);
      assert.deepEqual(await s.leftovers(), []);

      await put(s.store, 'org-1/export-3.jsonl', ['old\n']);
      const again = await s.store.create('org-1/export-3.jsonl');
      await again.write('new\n');
      await again.abort();
      assert.equal((await contentOf(s.store, 'org-1/export-3.jsonl'))?.text, 'old\n');
      assert.deepEqual(await s.leftovers(), []);
      await assert.rejects(again.write('more\n'), /aborted/);
    });

    test('writing a key again replaces its file whole', async () => {
      await put(s.store, 'org-2/export-4.jsonl', lines(20));
      await put(s.store, 'org-2/export-4.jsonl', ['{"short":true}\n']);
      assert.deepEqual(await contentOf(s.store, 'org-2/export-4.jsonl'), {
        text: '{"short":true}\n',
        bytes: 15,
      });
    });

    test('an empty file is a file', async () => {
      assert.deepEqual(await put(s.store, 'org-2/empty.jsonl', []), { bytes: 0 });
      assert.deepEqual(await contentOf(s.store, 'org-2/empty.jsonl'), { text: '', bytes: 0 });
    });

    test('a deleted file is gone; deleting a file that is not there is fine', async () => {
      await put(s.store, 'org-3/export-5.jsonl', ['a\n']);
      await s.store.delete('org-3/export-5.jsonl');
      assert.equal(await s.store.open('org-3/export-5.jsonl'), null);
      await s.store.delete('org-3/export-5.jsonl');
      await s.store.delete('org-never/nothing.jsonl');
      assert.equal(await s.store.open('org-never/nothing.jsonl'), null);
    });

    test('a 12 MB file round-trips', async () => {
      const chunks: string[] = [];
      for (let i = 0; i < 200; i++) chunks.push(lines(64, i * 64).join(''));
      const expected = chunks.join('');
      assert.ok(Buffer.byteLength(expected) > 12 * 1024 * 1024);
      const { bytes } = await put(s.store, 'org-4/big.jsonl', chunks);
      assert.equal(bytes, Buffer.byteLength(expected));
      const read = await contentOf(s.store, 'org-4/big.jsonl');
      assert.equal(read?.bytes, bytes);
      assert.ok(read?.text === expected, 'the big file reads back as written');
      assert.deepEqual(await s.leftovers(), []);
    });

    test('a big file aborted after parts of it were stored leaves nothing', async () => {
      const writer = await s.store.create('org-4/big-aborted.jsonl');
      for (let i = 0; i < 160; i++) await writer.write(lines(64, i * 64).join(''));
      await writer.abort();
      assert.equal(await s.store.open('org-4/big-aborted.jsonl'), null);
      assert.deepEqual(await s.leftovers(), []);
    });

    test('keys that are not plain relative paths are refused', async () => {
      for (const key of [
        '',
        '../escape.jsonl',
        'org/../../escape.jsonl',
        '..',
        '/etc/passwd',
        'org//a.jsonl',
        'org/./a.jsonl',
        'org/a b.jsonl',
        'org/é.jsonl',
        'org\\a.jsonl',
        'org/a.jsonl.1a2b3c4d5e6f.partial',
      ]) {
        await assert.rejects(s.store.create(key), /Not a valid export file key/, key);
        await assert.rejects(s.store.open(key), /Not a valid export file key/, key);
        await assert.rejects(s.store.delete(key), /Not a valid export file key/, key);
      }
    });
  });
}

describe('export files on a local volume, on disk', () => {
  let directory: string;
  let store: LocalExportFileStore;
  before(async () => {
    const parent = await mkdtemp(join(tmpdir(), 'export-files-disk-'));
    directory = join(parent, 'exports');
    store = new LocalExportFileStore(directory);
  });
  after(() => rm(join(directory, '..'), { recursive: true, force: true }));

  test('the folders of a key are made as needed, and nothing is written outside the store', async () => {
    await put(store, 'org-1/2025/export.jsonl', ['a\n']);
    assert.deepEqual(await readdir(join(directory, '..')), ['exports']);
    await assert.rejects(store.create('../escape.jsonl'));
    assert.deepEqual(await readdir(join(directory, '..')), ['exports']);
  });

  test('what a killed process left half-written is never opened, and is cleared once stale', async () => {
    await mkdir(join(directory, 'org-9'), { recursive: true });
    const stale = join(directory, 'org-9', 'export.jsonl.0123456789ab.partial');
    const recent = join(directory, 'org-9', 'export.jsonl.ba9876543210.partial');
    await writeFile(stale, '{"half":');
    await writeFile(recent, '{"half":');
    const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
    await utimes(stale, twoHoursAgo, twoHoursAgo);
    assert.equal(await store.open('org-9/export.jsonl'), null);

    // A new run of the same export clears what a run that died long ago left, not what another may be writing.
    await put(store, 'org-9/export.jsonl', ['whole\n']);
    assert.equal((await contentOf(store, 'org-9/export.jsonl'))?.text, 'whole\n');
    await assert.rejects(stat(stale), { code: 'ENOENT' });
    assert.ok((await stat(recent)).isFile());
  });

  test('a reader that opened a file keeps reading it while it is replaced or deleted', async () => {
    await put(store, 'org-1/busy.jsonl', ['first\n']);
    const file = await store.open('org-1/busy.jsonl');
    await put(store, 'org-1/busy.jsonl', ['second\n']);
    await store.delete('org-1/busy.jsonl');
    assert.equal((await readAll(file!.stream)).toString(), 'first\n');
  });

  test('signs no links: downloads go through log-export', async () => {
    assert.equal(await store.signedUrl(), null);
  });
});

describe('export files on an S3 bucket, as the bucket sees them', () => {
  let fake: FakeS3;
  let store: S3ExportFileStore;
  let clockSkewMs = 0;
  before(async () => {
    fake = await startFakeS3({ now: () => Date.now() + clockSkewMs });
    store = new S3ExportFileStore({
      bucket: fake.bucket,
      region: 'us-east-1',
      endpoint: fake.url,
      forcePathStyle: true,
      prefix: 'log-exports/',
      credentials: { accessKeyId: 'test-key', secretAccessKey: 'test-secret' },
    });
  });
  after(async () => {
    store.close();
    await fake.close();
  });

  test('objects are kept under the prefix, as JSON Lines; a big one as a multipart upload', async () => {
    await put(store, 'org-1/small.jsonl', ['a\n']);
    assert.deepEqual(fake.objects.get('log-exports/org-1/small.jsonl')?.body.toString(), 'a\n');
    assert.equal(fake.objects.get('log-exports/org-1/small.jsonl')?.contentType, 'application/x-ndjson');

    const before = fake.requests.length;
    await put(
      store,
      'org-1/big.jsonl',
      Array.from({ length: 160 }, (_, i) => lines(64, i * 64).join('')),
    );
    const made = fake.requests.slice(before);
    assert.equal(made.filter((r) => r.method === 'POST' && r.path.includes('?uploads')).length, 1);
    assert.equal(made.filter((r) => r.method === 'PUT' && r.path.includes('partNumber=')).length, 2);
    assert.equal(fake.objects.get('log-exports/org-1/big.jsonl')?.contentType, 'application/x-ndjson');
  });

  test('an aborted big file aborts its multipart upload in the bucket', async () => {
    const before = fake.requests.length;
    const writer = await store.create('org-1/aborted.jsonl');
    for (let i = 0; i < 160; i++) await writer.write(lines(64, i * 64).join(''));
    await writer.abort();
    const made = fake.requests.slice(before);
    assert.equal(made.filter((r) => r.method === 'POST' && r.path.includes('?uploads')).length, 1);
    assert.equal(made.filter((r) => r.method === 'DELETE' && r.path.includes('uploadId=')).length, 1);
    assert.equal(fake.uploads.size, 0);
    assert.equal(fake.objects.has('log-exports/org-1/aborted.jsonl'), false);
  });

  test('a slow bucket slows the writer instead of filling memory', async () => {
    fake.holdParts = true;
    const writer = await store.create('org-1/slow.jsonl');
    const chunk = lines(1024).join(''); // about 1 MB
    const chunks = 64;
    let accepted = 0;
    const writing = (async () => {
      for (let i = 0; i < chunks; i++) {
        await writer.write(chunk);
        accepted++;
      }
    })();
    while (fake.heldParts < 2) await new Promise((resolve) => setImmediate(resolve));
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    // Two parts of 8 MB on their way, one being gathered, and what the stream buffers: far from all 64 MB.
    assert.ok(accepted < 32, `accepted ${accepted} MB while the bucket answered nothing`);
    fake.holdParts = false;
    await writing;
    const { bytes } = await writer.finish();
    assert.equal(bytes, Buffer.byteLength(chunk) * chunks);
    assert.equal(fake.objects.get('log-exports/org-1/slow.jsonl')?.body.length, bytes);
  });

  test('a signed link downloads the file as an attachment with the given name', async () => {
    await put(store, 'org-2/export.jsonl', ['{"n":1}\n', '{"n":2}\n']);
    const url = (await store.signedUrl('org-2/export.jsonl', 'log-export-abc.jsonl', 900))!;
    assert.ok(url.startsWith(`${fake.url}/${fake.bucket}/log-exports/org-2/export.jsonl?`));
    // Signed for the host alone, so a plain GET from anywhere works.
    assert.equal(new URL(url).searchParams.get('X-Amz-SignedHeaders'), 'host');
    assert.equal(new URL(url).searchParams.get('X-Amz-Expires'), '900');
    const answer = await fetch(url);
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('content-disposition'), 'attachment; filename="log-export-abc.jsonl"');
    assert.equal(answer.headers.get('content-type'), 'application/x-ndjson');
    assert.equal(await answer.text(), '{"n":1}\n{"n":2}\n');
  });

  test('a link past its time, or without its signature, is refused', async () => {
    await put(store, 'org-2/expiring.jsonl', ['x\n']);
    const url = (await store.signedUrl('org-2/expiring.jsonl', 'log-export-x.jsonl', 60))!;
    assert.equal((await fetch(url)).status, 200);
    clockSkewMs = 61_000;
    try {
      const expired = await fetch(url);
      assert.equal(expired.status, 403);
      assert.match(await expired.text(), /<Code>AccessDenied<\/Code>/);
    } finally {
      clockSkewMs = 0;
    }
    const unsigned = new URL(url);
    unsigned.searchParams.delete('X-Amz-Signature');
    assert.equal((await fetch(unsigned)).status, 403);
  });

  test('a missing object opens as null, and other errors are not taken for absence', async () => {
    assert.equal(await store.open('org-2/missing.jsonl'), null);
    const elsewhere = new S3ExportFileStore({
      bucket: 'no-such-bucket',
      region: 'us-east-1',
      endpoint: fake.url,
      forcePathStyle: true,
      credentials: { accessKeyId: 'test-key', secretAccessKey: 'test-secret' },
    });
    try {
      await assert.rejects(elsewhere.open('org-2/missing.jsonl'), { name: 'NoSuchBucket' });
    } finally {
      elsewhere.close();
    }
  });
});
