import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  hash,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';

export function sha256Hex(value: string): string {
  // The one-shot form: no Hash object per call (API keys are hashed on every gateway request).
  return hash('sha256', value, 'hex');
}

/** Constant-time comparison of two strings of possibly different lengths. */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}

export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/**
 * Authenticated encryption (AES-256-GCM) for secrets at rest. Ciphertexts carry a version
 * prefix so the key can be rotated later without guessing formats.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(key: string) {
    const decoded = /^[0-9a-f]{64}$/i.test(key) ? Buffer.from(key, 'hex') : Buffer.from(key, 'base64');
    if (decoded.length !== 32) throw new Error('encryption key must be 32 bytes (base64 or hex)');
    this.key = decoded;
  }

  static generateKey(): string {
    return randomBytes(32).toString('base64');
  }

  encrypt(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `v1.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
  }

  /**
   * A MAC of `message` (HMAC-SHA256, base64url) under a key of its own for `purpose`, derived
   * from this one: what one purpose signs never verifies for another.
   */
  mac(purpose: string, message: string): string {
    const key = Buffer.from(hkdfSync('sha256', this.key, Buffer.alloc(0), `switchyard ${purpose}`, 32));
    return createHmac('sha256', key).update(message).digest('base64url');
  }

  /** Whether `mac` is `message`'s MAC for `purpose`, in constant time. */
  verifyMac(purpose: string, message: string, mac: string): boolean {
    return safeEqual(this.mac(purpose, message), mac);
  }

  decrypt(ciphertext: string): string {
    if (!ciphertext.startsWith('v1.')) throw new Error('unknown ciphertext format');
    const raw = Buffer.from(ciphertext.slice(3), 'base64');
    // A fixed tag length: otherwise a ciphertext cut short is checked against a shorter tag.
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12), { authTagLength: 16 });
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}
