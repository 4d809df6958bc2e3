import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AppError } from '@switchyard/core';
import { domainCovers, isRootDomain, normaliseDomain } from './email-domains.ts';
import { chooseSsoConnection } from './sso-login.ts';

const okta = { clientId: 'okta-client', enabled: true };
const entra = { clientId: 'entra-client', enabled: true };
const off = { clientId: 'old-client', enabled: false };
const domains = [
  { domain: 'example.com', allowSubdomains: true },
  { domain: 'example.org', allowSubdomains: false },
];

function refusal(fn: () => unknown): { status: number; param: string | null; code: string | null } {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof AppError, String(err));
    return { status: err.status, param: err.param, code: err.code };
  }
  assert.fail('not refused');
}

describe('chooseSsoConnection', () => {
  test('by sso_client_id when given', () => {
    const chosen = chooseSsoConnection(
      [okta, entra],
      { email: 'a@example.com', sso_client_id: 'entra-client' },
      domains,
    );
    assert.equal(chosen, entra);
  });

  test('an unknown or disabled sso_client_id is an error naming it', () => {
    assert.deepEqual(
      refusal(() => chooseSsoConnection([okta], { email: 'a@example.com', sso_client_id: 'nope' }, domains)),
      { status: 400, param: 'sso_client_id', code: 'unknown_sso_client_id' },
    );
    assert.deepEqual(
      refusal(() =>
        chooseSsoConnection([okta, off], { email: 'a@example.com', sso_client_id: 'old-client' }, domains),
      ),
      { status: 400, param: 'sso_client_id', code: 'sso_connection_disabled' },
    );
  });

  test("without it, by the organisation's email domains: its one enabled connection", () => {
    assert.equal(chooseSsoConnection([okta, off], { email: 'A@Example.COM' }, domains), okta);
    assert.equal(chooseSsoConnection([okta], { email: 'a@eu.example.com' }, domains), okta);
    assert.equal(chooseSsoConnection([okta], { email: 'a@example.org' }, domains), okta);
  });

  test('an email outside the claimed domains is an error naming email', () => {
    for (const email of ['a@eu.example.org', 'a@example.net', 'a@notexample.com', 'no-at-sign', 'a@']) {
      assert.deepEqual(
        refusal(() => chooseSsoConnection([okta], { email }, domains)),
        {
          status: 400,
          param: 'email',
          code: 'email_domain_not_claimed',
        },
      );
    }
  });

  test('several enabled connections need sso_client_id; none is an error', () => {
    assert.deepEqual(
      refusal(() => chooseSsoConnection([okta, entra], { email: 'a@example.com' }, domains)),
      {
        status: 400,
        param: 'sso_client_id',
        code: 'sso_client_id_required',
      },
    );
    assert.equal(
      refusal(() => chooseSsoConnection([off], { email: 'a@example.com' }, domains)).code,
      'sso_not_configured',
    );
    assert.equal(
      refusal(() => chooseSsoConnection([], { email: 'a@example.com' }, domains)).code,
      'sso_not_configured',
    );
  });
});

describe('email domain rules', () => {
  test('normalised to lower case; refused when not a DNS name', () => {
    assert.deepEqual(normaliseDomain(' Mail.Example.COM '), { domain: 'mail.example.com' });
    assert.deepEqual(normaliseDomain('xn--bcher-kva.example'), { domain: 'xn--bcher-kva.example' });
    for (const bad of [
      'com',
      'example.com.',
      '10.0.0.1',
      '::1',
      'a_b.com',
      '-a.com',
      'a-.com',
      'a..com',
      'bücher.de',
    ]) {
      assert.ok('error' in normaliseDomain(bad), bad);
    }
    assert.ok('error' in normaliseDomain(`${'a'.repeat(64)}.com`));
    assert.ok('domain' in normaliseDomain(`${'a'.repeat(63)}.com`));
    assert.ok('error' in normaliseDomain(`${'abc.'.repeat(63)}com`), 'over 253 characters');
  });

  test('root domains: two labels, or three under a listed two-part suffix', () => {
    for (const root of ['example.com', 'example.co.uk', 'example.com.au', 'example.co.jp'])
      assert.ok(isRootDomain(root), root);
    for (const other of ['eu.example.com', 'a.example.co.uk', 'co.uk', 'a.b.c.com', 'example.foo.bar']) {
      assert.ok(!isRootDomain(other), other);
    }
  });

  test('a claim covers its subdomains only with allow_subdomains', () => {
    assert.ok(domainCovers({ domain: 'example.com', allowSubdomains: true }, 'a.b.example.com'));
    assert.ok(!domainCovers({ domain: 'example.com', allowSubdomains: false }, 'a.example.com'));
    assert.ok(!domainCovers({ domain: 'example.com', allowSubdomains: true }, 'badexample.com'));
  });
});
