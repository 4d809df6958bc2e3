import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  isScope,
  kindCanHold,
  scopeLevel,
  scopePlane,
  scopesForKind,
  scopesForWorkspaceRole,
} from './scopes.ts';

const POLICY_SCOPES = ['rate_limits', 'usage_limits'].flatMap((resource) =>
  ['create', 'read', 'list', 'update', 'delete'].map((action) => `${resource}.${action}`),
);

describe('rate and usage limit scopes', () => {
  test('are management scopes of the workspace, held by every kind of key', () => {
    for (const scope of POLICY_SCOPES) {
      assert.ok(isScope(scope), scope);
      assert.equal(scopeLevel(scope), 'workspace');
      assert.equal(scopePlane(scope), 'management');
      for (const kind of ['organisation_admin', 'workspace_service', 'workspace_user'] as const) {
        assert.ok(kindCanHold(kind, scope), `${kind} ${scope}`);
        assert.ok(scopesForKind(kind).includes(scope), `${kind} ${scope}`);
      }
    }
  });

  test('a workspace admin or manager manages limits; a member only reads them', () => {
    for (const role of ['admin', 'manager'] as const) {
      for (const scope of POLICY_SCOPES)
        assert.ok(scopesForWorkspaceRole(role).includes(scope as never), scope);
    }
    const member = scopesForWorkspaceRole('member').filter((scope) => POLICY_SCOPES.includes(scope));
    assert.deepEqual(member, [
      'rate_limits.read',
      'rate_limits.list',
      'usage_limits.read',
      'usage_limits.list',
    ]);
  });
});
