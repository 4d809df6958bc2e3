import assert from 'node:assert/strict';
import type { ServiceHarness } from '@switchyard/testing';

/** For route tests: a workspace created through the API with the harness's admin key. */
export async function createWorkspace(h: ServiceHarness, name: string, slug?: string) {
  const res = await h.request('POST', '/v2/workspaces', { key: h.adminKey, json: { name, slug } });
  assert.equal(res.status, 200, res.text);
  return res.body as { id: string; slug: string };
}
