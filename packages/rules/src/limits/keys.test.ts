import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  conditionKeysOf,
  groupByKeysOf,
  isAnyGroupByKey,
  isConditionKey,
  isGroupByKey,
  isMetadataKey,
} from './keys.ts';

describe('keys', () => {
  test('condition keys depend on the target', () => {
    assert.ok(isConditionKey('llm', 'model'));
    assert.ok(!isConditionKey('mcp_tools', 'model'));
    assert.ok(isConditionKey('mcp_tools', 'tool_name'));
    assert.ok(!isConditionKey('llm', 'tool_name'));
    assert.ok(isConditionKey('llm', 'metadata.team'));
    assert.ok(!isConditionKey('llm', 'metadata.'));
    for (const key of ['api_key', 'workspace_id', 'organisation_id', 'user_id']) {
      assert.ok(isConditionKey('llm', key) && isConditionKey('mcp_tools', key), key);
    }
  });

  test('an error names the condition keys of the target', () => {
    assert.equal(
      conditionKeysOf('llm'),
      'api_key, workspace_id, organisation_id, user_id, model, provider, metadata.<name>',
    );
    assert.equal(
      conditionKeysOf('mcp_tools'),
      'api_key, workspace_id, organisation_id, user_id, mcp_server, tool_name, metadata.<name>',
    );
  });

  test('group_by of model calls takes who calls and metadata, not what is called', () => {
    for (const key of ['api_key', 'workspace_id', 'organisation_id', 'user_id', 'metadata._user'])
      assert.ok(isGroupByKey('llm', key));
    for (const key of ['model', 'provider', 'tool_name', 'mcp_server', 'metadata'])
      assert.ok(!isGroupByKey('llm', key), key);
  });

  test('group_by of tool calls also takes the server and the tool, never the model', () => {
    for (const key of ['api_key', 'workspace_id', 'user_id', 'mcp_server', 'tool_name', 'metadata.team'])
      assert.ok(isGroupByKey('mcp_tools', key), key);
    for (const key of ['model', 'provider', 'metadata']) assert.ok(!isGroupByKey('mcp_tools', key), key);
    assert.ok(isAnyGroupByKey('tool_name'));
    assert.ok(!isAnyGroupByKey('model'));
    assert.equal(groupByKeysOf('llm'), 'api_key, workspace_id, organisation_id, user_id, metadata.<name>');
    assert.equal(
      groupByKeysOf('mcp_tools'),
      'api_key, workspace_id, organisation_id, user_id, mcp_server, tool_name, metadata.<name>',
    );
  });

  test('a metadata key is metadata.<name> of 1 to 128 letters, digits and _ . : -', () => {
    for (const key of ['metadata.team', 'metadata.a.b:c-d_e', `metadata.${'x'.repeat(128)}`])
      assert.ok(isMetadataKey(key), key);
    for (const key of ['metadata.', 'metadata', 'metadata.a b', `metadata.${'x'.repeat(129)}`, 'meta.team'])
      assert.ok(!isMetadataKey(key), key);
  });
});
