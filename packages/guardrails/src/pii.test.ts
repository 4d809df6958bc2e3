import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseGuardrailChecks } from './definitions.ts';
import { evaluateCheck } from './evaluate.ts';
import { ibanChecksum, luhn, PII_CATEGORIES, type PiiCategory } from './pii.ts';

/** What the PII check finds in `text`, looking for `category` only: the matched texts. */
function finds(category: PiiCategory, text: string): string[] {
  const [check] = parseGuardrailChecks([{ id: 'default.pii', parameters: { categories: [category] } }]);
  const verdict = evaluateCheck(check!, { text, phase: 'input' });
  assert.equal(verdict.error, undefined);
  return (verdict.matches ?? []).map((span) => text.slice(span.start, span.end));
}

/** Each sample, set in a sentence, is found whole. */
function found(category: PiiCategory, samples: string[]) {
  for (const sample of samples) {
    assert.deepEqual(finds(category, `Contact: ${sample}, thanks.`), [sample], `${category}: ${sample}`);
  }
}

/** Nothing in these texts is taken for `category`. */
function notFound(category: PiiCategory, texts: string[]) {
  for (const text of texts) assert.deepEqual(finds(category, text), [], `${category}: ${text}`);
}

const PEM = [
  '-----BEGIN RSA PRIVATE KEY-----',
  'MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu',
  'KUpRKfFLfRYC9AIKjbJTWit+CqvjWYzvQwECAwEAAQJAIJLixBy2qpFoS4DSmoEm',
  '-----END RSA PRIVATE KEY-----',
].join('\n');

describe('PII and secrets', () => {
  test('email addresses', () => {
    found('email', [
      'ada@example.com',
      'first.last+tag@mail.example.co.uk',
      "o'brien@example.ie",
      'X_Y-9@sub-domain.example.org',
    ]);
    notFound('email', [
      'icon@2x.png and logo@3x.svg',
      'npm i @types/node',
      'user@localhost',
      'meet me @ noon',
      'a@b.c',
      'ada @ example.com',
    ]);
  });

  test('phone numbers: international with +, North American written forms', () => {
    found('phone', [
      '+1 415 555 0134',
      '+44 20 7946 0958',
      '+14155550134',
      '+33 1 23 45 67 89',
      '(415) 555-0134',
      '415-555-0134',
      '1-415-555-0134',
      '415.555.0134',
    ]);
    notFound('phone', [
      'Call 4155550134 now',
      'Order 123-456-7890 shipped',
      'Released 2024-01-15 at 10:30',
      'Version 1.2.3.4',
      'Total: 1,234,567.89',
      'x + 12 345 678',
      '+12',
      'ISBN 978-0-306-40615-7',
    ]);
  });

  test('credit card numbers: known issuers, grouped as printed, Luhn-checked', () => {
    found('credit_card', [
      '4111 1111 1111 1111',
      '4111-1111-1111-1111',
      '4111111111111111',
      '5555 5555 5555 4444',
      '3782 822463 10005',
      '6011 1111 1111 1117',
      '4222222222222',
    ]);
    // A number that is not a card does not hide one right after it.
    assert.deepEqual(finds('credit_card', 'Order 0 4111 1111 1111 1111'), ['4111 1111 1111 1111']);
    notFound('credit_card', [
      '4111 1111 1111 1112', // Luhn fails
      '1234 5678 9012 3456', // no issuer starts with 1
      '4111 1111 1111 11112222', // part of a longer number
      '41111 111 1111 1111', // not grouped as cards are
      '4111 1111-1111 1111', // mixed separators
      'id 79927398713', // Luhn-valid, but too short for a card
      'tracking 9400111899223033005436',
    ]);
  });

  test('IBANs: registered length per country, mod-97 checked', () => {
    found('iban', [
      'DE89 3704 0044 0532 0130 00',
      'DE89370400440532013000',
      'GB82 WEST 1234 5698 7654 32',
      'NL91ABNA0417164300',
      'FR1420041010050500013M02606',
    ]);
    notFound('iban', [
      'DE89 3704 0044 0532 0130 01', // checksum
      'DE89 3704 0044 0532 0130', // length for DE
      'XX89370400440532013000', // no such country
      'ABCD1234EFGH5678',
    ]);
  });

  test('national ID numbers: US SSNs outside the never-issued ranges, UK NINOs', () => {
    found('national_id', ['536-22-1234', '536 22 1234', 'AB 12 34 56 C', 'AB123456C', 'JG103759A']);
    notFound('national_id', [
      '000-12-3456',
      '666-12-3456',
      '912-34-5678',
      '536-00-1234',
      '536-22-0000',
      '078-05-1120',
      '536-22 1234',
      '536221234',
      'QQ 12 34 56 C', // Q never starts a NINO
      'GB 12 34 56 A', // GB is not allocated
      'AB 12 34 56 E', // suffix A to D
      'phone 536-22-12345',
    ]);
  });

  test('IP addresses, v4 and v6', () => {
    found('ip_address', [
      '192.168.1.20',
      '8.8.8.8',
      '2001:db8::8a2e:370:7334',
      '2001:0db8:85a3:0000:0000:8a2e:0370:7334',
      'fe80::1',
      '::1',
    ]);
    // An IPv4 tail is found as an address of its own too: redaction merges the two.
    assert.deepEqual(finds('ip_address', 'at ::ffff:192.0.2.128 now'), ['192.0.2.128', '::ffff:192.0.2.128']);
    notFound('ip_address', [
      '256.1.1.1',
      '1.2.3',
      'v1.2.3.4',
      '1.2.3.4.5',
      'at 12:30:45',
      'std::vector<int> and abc::def',
      'MAC 00:1A:2B:3C:4D:5E',
      '::',
    ]);
  });

  test('secrets: API keys, tokens, private keys', () => {
    found('secret', [
      'sk-proj-4fG7hJ2kL9mN3pQ8rS1tU6vW0xY5zA2b',
      'sk-ant-api03-AbC123dEf456GhI789jKl012MnO345pQr',
      'AKIAIOSFODNN7EXAMPLE',
      'ghp_1234567890abcdefghijklmnopqrstuvwxyzAB',
      'xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx',
      'AIzaSyA1234567890abcdefghijklmnopqrstuv',
      'sk_live_4eC39HqLyjWDarjtT1zdp7dc',
      'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dQw4w9WgXcQabc123_-',
    ]);
    assert.deepEqual(finds('secret', `Here:\n${PEM}\nKeep it safe.`), [PEM]);
    // Cut off before its END line: the BEGIN line and the key text after it.
    const cut = PEM.split('\n').slice(0, 3).join('\n');
    assert.deepEqual(finds('secret', `${cut}!`), [cut]);
    notFound('secret', [
      'pip install scikit-learn; sk-learn is not a key',
      'sk-this-is-a-placeholder-key-value',
      'AKIA is a prefix',
      'the ghp_ prefix',
      '-----BEGIN PUBLIC KEY-----',
      'eyJ alone',
    ]);
  });

  test('every category at once, each find labelled for redaction', () => {
    const [check] = parseGuardrailChecks([{ id: 'default.pii' }]);
    const text =
      'ada@example.com, +44 20 7946 0958, 4111 1111 1111 1111, DE89370400440532013000, 536-22-1234, 10.0.0.1, AKIAIOSFODNN7EXAMPLE';
    const verdict = evaluateCheck(check!, { text, phase: 'output' });
    assert.deepEqual(verdict.matches!.map((span) => span.label).sort(), [
      'CREDIT_CARD',
      'EMAIL',
      'IBAN',
      'IP_ADDRESS',
      'NATIONAL_ID',
      'PHONE',
      'SECRET',
    ]);
    assert.equal(PII_CATEGORIES.length, 7);
    assert.doesNotMatch(
      verdict.explanation,
      /ada@example|4111/,
      'the explanation does not repeat what it found',
    );
    assert.match(verdict.explanation, /1 email address, .*1 credit card number/);
  });

  test('the check digits', () => {
    assert.equal(luhn('79927398713'), true);
    assert.equal(luhn('79927398710'), false);
    assert.equal(ibanChecksum('GB82WEST12345698765432'), true);
    assert.equal(ibanChecksum('GB82WEST12345698765431'), false);
  });
});
