import assert from 'node:assert/strict';
import { test } from 'node:test';
import { camelCase, camelKeys, type CamelKeys } from './naming.ts';

test('camelCase renames snake_case names and leaves others as they are', () => {
  assert.equal(camelCase('workspace_id'), 'workspaceId');
  assert.equal(camelCase('key_transition_expires_at'), 'keyTransitionExpiresAt');
  assert.equal(camelCase('name'), 'name');
  assert.equal(camelCase('rate_limit_2'), 'rateLimit2');
});

test('camelKeys renames the top level only, keeping nested keys and every value', () => {
  const body = { workspace_id: 'ws', expires_at: undefined, metadata: { team_name: 'a' } };
  const input: CamelKeys<typeof body> = camelKeys(body);
  assert.deepEqual(input, { workspaceId: 'ws', expiresAt: undefined, metadata: { team_name: 'a' } });
  assert.ok('expiresAt' in input);
});
