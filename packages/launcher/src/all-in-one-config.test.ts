import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runAllInOne } from './all-in-one.ts';

test(
  'an embedded database deadline that is not a number of milliseconds stops the start, naming the variable',
  { timeout: 30_000 },
  async () => {
    for (const name of ['EMBEDDED_DB_TRANSACTION_TIMEOUT_MS', 'EMBEDDED_DB_WAIT_TIMEOUT_MS']) {
      for (const value of ['soon', '0', '-5']) {
        await assert.rejects(runAllInOne({ [name]: value }), (err: Error) => {
          assert.match(err.message, new RegExp(`^Invalid configuration: ${name}: `), `${name}=${value}`);
          return true;
        });
      }
    }
  },
);
