import assert from 'node:assert/strict';
import type { ServiceHarness } from '@switchyard/testing';

/**
 * For route tests of one kind of limit policy under `path`: create, read, change and list
 * with the workspace key unless another is given. `harness` is read at each call, so the
 * helpers may be made before the harness starts.
 */
export function policyRequests(harness: () => ServiceHarness, path: string) {
  return {
    /** Creates a policy and answers its id. */
    async create(json: Record<string, unknown>, key = harness().workspaceKey): Promise<string> {
      const res = await harness().request('POST', path, { key, json });
      assert.equal(res.status, 200, res.text);
      return res.body.id as string;
    },
    get: (id: string, key = harness().workspaceKey, query = '') =>
      harness().request('GET', `${path}/${id}${query}`, { key }),
    put: (id: string, json: unknown, key = harness().workspaceKey) =>
      harness().request('PUT', `${path}/${id}`, { key, json }),
    /** The policies the key lists, all on one page. */
    async listed(key: string, query = ''): Promise<Array<{ id: string }>> {
      const res = await harness().request('GET', `${path}?page_size=1000${query}`, { key });
      assert.equal(res.status, 200, res.text);
      return res.body.data;
    },
  };
}
