import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { batchFieldsOf, batchOperationOf } from './batches.ts';

const json = (value: unknown) => Buffer.from(JSON.stringify(value));

describe('reading a batch answer for its record', () => {
  test('an OpenAI batch gives its id, status, endpoint and file ids', () => {
    assert.deepEqual(
      batchFieldsOf(
        json({
          id: 'batch_1',
          object: 'batch',
          status: 'completed',
          endpoint: '/v1/chat/completions',
          input_file_id: 'file-in',
          output_file_id: 'file-out',
          error_file_id: null,
        }),
        undefined,
      ),
      {
        id: 'batch_1',
        status: 'completed',
        endpoint: '/v1/chat/completions',
        inputFileId: 'file-in',
        outputFileId: 'file-out',
        errorFileId: '',
      },
    );
  });

  test('another shape gives what it has; the path names the batch when the answer does not', () => {
    assert.deepEqual(batchFieldsOf(json({ processing_status: 'ended', results_url: 'x' }), 'msgbatch_1'), {
      id: 'msgbatch_1',
      status: '',
      endpoint: '',
      inputFileId: '',
      outputFileId: '',
      errorFileId: '',
    });
    assert.equal(batchFieldsOf(json({ status: 'completed', output_file_id: 7 }), 'b')?.outputFileId, '');
  });

  test('nothing is recorded of what is not one batch', () => {
    for (const body of [
      Buffer.from('not json'),
      Buffer.alloc(0),
      json([{ id: 'batch_1' }]),
      json({ object: 'list', data: [] }),
      json({ status: 'completed' }),
      json({ id: 'x'.repeat(300), object: 'batch' }),
      Buffer.from(JSON.stringify({ id: 'batch_1', pad: 'x'.repeat(70_000) })),
    ]) {
      assert.equal(batchFieldsOf(body, undefined), undefined, body.subarray(0, 40).toString());
    }
    // An answer naming another batch than the path does is not this batch's.
    assert.equal(batchFieldsOf(json({ id: 'batch_2', object: 'batch' }), 'batch_1'), undefined);
  });
});

describe('which requests are batch operations', () => {
  test('create, read, cancel and output; nothing else', () => {
    assert.deepEqual(batchOperationOf('POST', '/batches'), { kind: 'create' });
    assert.deepEqual(batchOperationOf('GET', '/batches/batch_1'), { kind: 'read', id: 'batch_1' });
    assert.deepEqual(batchOperationOf('POST', '/batches/batch_1/cancel'), { kind: 'cancel', id: 'batch_1' });
    assert.deepEqual(batchOperationOf('GET', '/batches/batch_1/output'), { kind: 'output', id: 'batch_1' });
    assert.equal(batchOperationOf('GET', '/batches'), undefined);
    assert.equal(batchOperationOf('DELETE', '/batches/batch_1'), undefined);
    assert.equal(batchOperationOf('GET', '/batches/batch_1/other'), undefined);
    assert.equal(batchOperationOf('GET', '/batches/%E0%A4%A/output'), undefined);
  });
});
