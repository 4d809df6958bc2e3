import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { STRIPPED_SECRET, withoutSecrets } from './request-logs.ts';

describe('request bodies as stored', () => {
  test('credential-like keys have their values stripped at any depth; everything else is kept', () => {
    const body = JSON.stringify({
      model: 'gpt-4o',
      max_tokens: 20,
      api_key: 'sk-live-123',
      config: {
        targets: [{ provider: 'openai', 'x-api-key': 'sk-ant-1', headers: { Authorization: 'Bearer abc' } }],
        client_secret: 's3cret',
      },
      messages: [{ role: 'user', content: 'my "password": is not a key here' }],
    });
    assert.deepEqual(JSON.parse(withoutSecrets(body)), {
      model: 'gpt-4o',
      max_tokens: 20,
      api_key: STRIPPED_SECRET,
      config: {
        targets: [
          { provider: 'openai', 'x-api-key': STRIPPED_SECRET, headers: { Authorization: STRIPPED_SECRET } },
        ],
        client_secret: STRIPPED_SECRET,
      },
      messages: [{ role: 'user', content: 'my "password": is not a key here' }],
    });
  });

  test('a body without such keys, or not JSON, is kept byte for byte', () => {
    const spaced = '{ "model": "gpt-4o",   "messages": [], "max_tokens": 5 }';
    assert.equal(withoutSecrets(spaced), spaced);
    const notJson = '{"api_key": "sk-1", oops';
    assert.equal(withoutSecrets(notJson), notJson);
    const quotedOnly = '{"messages":[{"role":"user","content":"\\"api_key\\": sk-1"}]}';
    assert.equal(withoutSecrets(quotedOnly), quotedOnly);
  });
});
