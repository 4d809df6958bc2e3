import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { BadRequest } from '@switchyard/core';
import { checkCustomHost, isPublicAddress, isTrusted, type Resolver } from './unsafe-host.ts';

const dns =
  (table: Record<string, string[]>): Resolver =>
  async (host) =>
    table[host] ?? [];
const options = (resolve: Resolver, trusted: string[] = []) => ({
  trusted,
  resolve,
  param: 'x-vendor-custom-host',
});

async function refusal(
  url: string,
  resolve: Resolver = dns({}),
  trusted: string[] = [],
): Promise<BadRequest> {
  try {
    await checkCustomHost(url, options(resolve, trusted));
  } catch (err) {
    assert.ok(err instanceof BadRequest);
    return err;
  }
  assert.fail(`${url} was accepted`);
}

describe('the unsafe-host check', () => {
  test('accepts an https host that resolves only to public addresses', async () => {
    const url = await checkCustomHost(
      'https://llm.example.com/v1',
      options(dns({ 'llm.example.com': ['93.184.216.34'] })),
    );
    assert.equal(url.hostname, 'llm.example.com');
  });

  const refused: Array<[string, string, Record<string, string[]>]> = [
    ['a private IPv4 literal', 'http://10.0.0.5/v1', {}],
    ['a loopback literal', 'http://127.0.0.1:8080/v1', {}],
    ['an IPv6 loopback literal', 'http://[::1]/v1', {}],
    ['an IPv4-mapped private IPv6 literal', 'http://[::ffff:192.168.1.1]/v1', {}],
    ['a link-local (cloud metadata) address', 'http://169.254.169.254/latest/meta-data', {}],
    ['a carrier-grade NAT address', 'http://100.64.0.1/', {}],
    ['a unique-local IPv6 address', 'http://[fd00:ec2::254]/', {}],
    ['a metadata host name', 'http://metadata.google.internal/computeMetadata/v1', {}],
    [
      'a name that resolves to a private address',
      'https://internal.example.com/v1',
      { 'internal.example.com': ['192.168.0.10'] },
    ],
    [
      'a name with one public and one private address',
      'https://mixed.example.com/v1',
      { 'mixed.example.com': ['93.184.216.34', '10.1.2.3'] },
    ],
    ['a name that does not resolve', 'https://nowhere.example.com/v1', {}],
    ['a non-http scheme', 'file:///etc/passwd', {}],
    ['an ftp URL', 'ftp://files.example.com/', {}],
    ['a URL with a fragment', 'https://llm.example.com/v1#frag', { 'llm.example.com': ['93.184.216.34'] }],
    [
      'credentials in the URL',
      'https://user:pw@llm.example.com/v1',
      { 'llm.example.com': ['93.184.216.34'] },
    ],
    ['something that is not a URL', 'not a url', {}],
  ];
  for (const [what, url, table] of refused) {
    test(`refuses ${what}`, async () => {
      const err = await refusal(url, dns(table));
      assert.equal(err.status, 400);
      assert.equal(err.param, 'x-vendor-custom-host');
      assert.equal(err.code, 'unsafe_custom_host');
    });
  }

  test('a trusted host and its subdomains skip the address check', async () => {
    const resolve = dns({ 'vllm.internal.corp': ['10.0.0.7'] });
    await checkCustomHost('http://vllm.internal.corp:8000/v1', options(resolve, ['internal.corp']));
    await checkCustomHost('http://10.0.0.7:8000/v1', options(resolve, ['10.0.0.7']));
    await refusal(
      'http://vllm.internal.corp.evil.com/v1',
      dns({ 'vllm.internal.corp.evil.com': ['10.0.0.7'] }),
      ['internal.corp'],
    );
  });

  test('a trusted host still needs an http(s) scheme and no fragment', async () => {
    await refusal('ftp://internal.corp/', dns({}), ['internal.corp']);
    await refusal('http://internal.corp/#x', dns({}), ['internal.corp']);
  });

  test('isTrusted matches whole labels only', () => {
    assert.ok(isTrusted('a.b.example.com', ['example.com']));
    assert.ok(isTrusted('example.com', ['.example.com']));
    assert.ok(!isTrusted('badexample.com', ['example.com']));
  });

  test('every private-range IPv4 address is refused', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 255 }),
        fc.integer({ min: 0, max: 255 }),
        fc.integer({ min: 0, max: 255 }),
        (a, b, c) => {
          return ![
            `10.${a}.${b}.${c}`,
            `192.168.${b}.${c}`,
            `172.${16 + (a % 16)}.${b}.${c}`,
            `127.${a}.${b}.${c}`,
          ].some(isPublicAddress);
        },
      ),
    );
  });
});
