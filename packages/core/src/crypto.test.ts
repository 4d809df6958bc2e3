import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { SecretBox, randomToken, safeEqual, sha256Hex } from './crypto.ts';

function rawOf(ciphertext: string): Buffer {
  assert.ok(ciphertext.startsWith('v1.'));
  return Buffer.from(ciphertext.slice(3), 'base64');
}

function fromRaw(raw: Buffer): string {
  return `v1.${raw.toString('base64')}`;
}

describe('SecretBox', () => {
  const box = new SecretBox(SecretBox.generateKey());

  test('decrypts what it encrypted', () => {
    for (const plaintext of ['sk-provider-key', '', 'ünïcødé ✓ 鍵', 'x'.repeat(100_000)]) {
      assert.equal(box.decrypt(box.encrypt(plaintext)), plaintext);
    }
  });

  test('ciphertexts carry the v1 prefix and do not contain the plaintext', () => {
    const ciphertext = box.encrypt('sk-provider-key');
    assert.match(ciphertext, /^v1\.[A-Za-z0-9+/]+=*$/);
    assert.ok(!ciphertext.includes('sk-provider-key'));
    assert.ok(!rawOf(ciphertext).includes(Buffer.from('sk-provider-key')));
  });

  test('a MAC verifies for its message and purpose only, and under its key only', () => {
    const mac = box.mac('links', 'export 1 until 2026');
    assert.match(mac, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(box.mac('links', 'export 1 until 2026'), mac);
    assert.ok(box.verifyMac('links', 'export 1 until 2026', mac));
    assert.ok(!box.verifyMac('links', 'export 2 until 2026', mac));
    assert.ok(!box.verifyMac('other', 'export 1 until 2026', mac));
    assert.ok(!box.verifyMac('links', 'export 1 until 2026', mac.slice(0, -1)));
    assert.ok(!new SecretBox(SecretBox.generateKey()).verifyMac('links', 'export 1 until 2026', mac));
  });

  test('encrypting the same plaintext twice gives different ciphertexts', () => {
    assert.notEqual(box.encrypt('same'), box.encrypt('same'));
  });

  test('a change to any byte of the nonce, tag or body is detected', () => {
    const raw = rawOf(box.encrypt('top secret'));
    for (let i = 0; i < raw.length; i++) {
      const tampered = Buffer.from(raw);
      tampered[i] = tampered[i]! ^ 0x01;
      assert.throws(() => box.decrypt(fromRaw(tampered)), Error, `flipped byte ${i} was not detected`);
    }
  });

  test('a truncated or extended ciphertext is rejected', () => {
    const raw = rawOf(box.encrypt('top secret'));
    assert.throws(() => box.decrypt(fromRaw(raw.subarray(0, raw.length - 1))));
    assert.throws(() => box.decrypt(fromRaw(Buffer.concat([raw, Buffer.from([0])]))));
    assert.throws(() => box.decrypt(fromRaw(raw.subarray(0, 12))));
  });

  test('a shortened authentication tag is rejected, so tags cannot be forged piecewise', () => {
    const raw = rawOf(box.encrypt(''));
    for (const tagBytes of [4, 8, 12, 15]) {
      assert.throws(
        () => box.decrypt(fromRaw(raw.subarray(0, 12 + tagBytes))),
        Error,
        `a ${tagBytes}-byte tag was accepted`,
      );
    }
  });

  test('a different key cannot decrypt', () => {
    const ciphertext = box.encrypt('top secret');
    const other = new SecretBox(SecretBox.generateKey());
    assert.throws(() => other.decrypt(ciphertext));
  });

  test('rejects an unknown ciphertext format', () => {
    assert.throws(() => box.decrypt('v2.AAAA'), /unknown ciphertext format/);
    assert.throws(() => box.decrypt('plaintext'), /unknown ciphertext format/);
  });

  test('takes a 32-byte key as base64 or hex, and both spell the same key', () => {
    const bytes = randomBytes(32);
    const fromBase64 = new SecretBox(bytes.toString('base64'));
    const fromHex = new SecretBox(bytes.toString('hex'));
    assert.equal(fromHex.decrypt(fromBase64.encrypt('shared')), 'shared');
    assert.equal(new SecretBox(bytes.toString('hex').toUpperCase()).decrypt(fromBase64.encrypt('x')), 'x');
  });

  test('rejects keys that are not 32 bytes', () => {
    for (const key of [
      randomBytes(16).toString('base64'),
      randomBytes(31).toString('hex'),
      randomBytes(33).toString('base64'),
      '',
    ]) {
      assert.throws(
        () => new SecretBox(key),
        /encryption key must be 32 bytes/,
        `accepted ${key.length}-char key`,
      );
    }
  });

  test('generateKey gives distinct base64 keys of 32 bytes', () => {
    const a = SecretBox.generateKey();
    const b = SecretBox.generateKey();
    assert.notEqual(a, b);
    assert.equal(Buffer.from(a, 'base64').length, 32);
  });
});

describe('safeEqual', () => {
  test('is true only for identical strings', () => {
    assert.equal(safeEqual('Bearer abc', 'Bearer abc'), true);
    assert.equal(safeEqual('', ''), true);
    assert.equal(safeEqual('Bearer abc', 'Bearer abd'), false);
    assert.equal(safeEqual('Bearer abc', 'bearer abc'), false);
  });

  test('is false for strings of different lengths, including prefixes', () => {
    assert.equal(safeEqual('abc', 'abcd'), false);
    assert.equal(safeEqual('abcd', 'abc'), false);
    assert.equal(safeEqual('', 'a'), false);
  });
});

describe('sha256Hex and randomToken', () => {
  test('sha256Hex gives the lower-case hex digest', () => {
    assert.equal(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  test('randomToken is url-safe, of the requested entropy, and unique', () => {
    const a = randomToken();
    assert.match(a, /^[A-Za-z0-9_-]{43}$/);
    assert.notEqual(a, randomToken());
    assert.equal(Buffer.from(randomToken(16), 'base64url').length, 16);
  });
});
