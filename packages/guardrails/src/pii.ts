import type { Scanner } from './scan.ts';

const escape = (text: string) => text.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');

/**
 * A lead pattern (see Scanner) for matches that begin with one of `literals` after `before`
 * (a lookbehind): it matches each literal, and each beginning of one cut off by the end.
 */
function literalLead(before: string, literals: string[]): RegExp {
  const alternatives = new Set<string>();
  for (const literal of literals) {
    alternatives.add(escape(literal));
    for (let k = 1; k < literal.length; k++) alternatives.add(`${escape(literal.slice(0, k))}$`);
  }
  return new RegExp(`${before}(?:${[...alternatives].join('|')})`, 'g');
}

/**
 * Personal data and secrets found by shape and, where the data carries one, by its check
 * digits (Luhn for card numbers, mod 97 for IBANs), so that numbers that merely look alike
 * are left alone. Every pattern is bounded (no match is longer than its `span`) and anchored
 * at the start of a run of the characters it reads (a lookbehind), so scanning is linear in
 * the text and a stream can release text as soon as no match can still cover it.
 */

export const PII_CATEGORIES = [
  'email',
  'phone',
  'credit_card',
  'iban',
  'national_id',
  'ip_address',
  'secret',
] as const;
export type PiiCategory = (typeof PII_CATEGORIES)[number];

/** The placeholder label of each category, and how an explanation names one find. */
export const PII_LABELS: Record<PiiCategory, { label: string; noun: string }> = {
  email: { label: 'EMAIL', noun: 'email address' },
  phone: { label: 'PHONE', noun: 'phone number' },
  credit_card: { label: 'CREDIT_CARD', noun: 'credit card number' },
  iban: { label: 'IBAN', noun: 'IBAN' },
  national_id: { label: 'NATIONAL_ID', noun: 'national ID number' },
  ip_address: { label: 'IP_ADDRESS', noun: 'IP address' },
  secret: { label: 'SECRET', noun: 'secret (API key, token or private key)' },
};

// Email: local part (at most 64 characters) @ up to 8 dot-separated labels and a top-level
// domain. Names such as `icon@2x.png` are file names, not addresses.
const LOCAL = "A-Za-z0-9!#$%&'*+/=?^_`{|}~.-";
const LOCAL_FIRST = "A-Za-z0-9!#$%&'*+/=?^_`{|}~-";
const EMAIL_START = `(?<![${LOCAL}])[${LOCAL_FIRST}][${LOCAL}]{0,63}@`;
const FILE_EXTENSIONS = new Set(['png', 'jpg', 'jpeg', 'gif', 'svg', 'webp', 'ico', 'bmp', 'tif', 'tiff']);
const email: Scanner = {
  label: PII_LABELS.email.label,
  pattern: new RegExp(
    `${EMAIL_START}(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.){1,8}[A-Za-z]{2,63}(?![A-Za-z0-9-])`,
    'g',
  ),
  // 64 + 1 + 8 labels of 64 + 63, and the one character the lookahead reads.
  span: 64 + 1 + 8 * 64 + 63 + 1,
  // A run of local-part characters that reaches an `@` or the end of the text so far.
  lead: new RegExp(`(?<![${LOCAL}])[${LOCAL_FIRST}][${LOCAL}]{0,63}(?:@|$)`, 'g'),
  accept: (candidate) =>
    candidate.length <= 254 &&
    !FILE_EXTENSIONS.has(candidate.slice(candidate.lastIndexOf('.') + 1).toLowerCase()),
};

// Phone numbers: international ones written with `+` and a country code (8 to 15 digits,
// E.164), and North American ones in their usual written form ((415) 555-0134, 415-555-0134).
// Bare digit runs are not taken for phone numbers: too many other numbers look like them.
const digitCount = (text: string) => text.replace(/\D/g, '').length;
const internationalPhone: Scanner = {
  label: PII_LABELS.phone.label,
  pattern: /(?<![\w+])\+(?:\d{7,15}|\d{1,3}(?:[ .-]\(?\d{1,4}\)?){1,6})(?!\w|[ .-]\(?\d)/g,
  span: 1 + 3 + 6 * 7 + 3,
  lead: /(?<![\w+])\+/g,
  accept: (candidate) => {
    const digits = digitCount(candidate);
    return digits >= 8 && digits <= 15;
  },
};
const northAmericanPhone: Scanner = {
  label: PII_LABELS.phone.label,
  pattern: /(?<![\w+.-])(?:1[-. ])?(?:\([2-9]\d{2}\) ?|[2-9]\d{2}[-. ])[2-9]\d{2}[-.]\d{4}(?!\w|[-.]?\d)/g,
  span: 2 + 6 + 4 + 4 + 2,
  lead: /(?<![\w+.-])[1-9(]/g,
};

/** Whether a digit string passes the Luhn check. */
export function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return digits.length > 0 && sum % 10 === 0;
}

/** Issuer prefixes and lengths of the card networks (Visa, Mastercard, Amex, Diners, JCB, Discover, UnionPay). */
function knownIssuer(digits: string): boolean {
  const n = digits.length;
  const two = Number(digits.slice(0, 2));
  const three = Number(digits.slice(0, 3));
  const four = Number(digits.slice(0, 4));
  if (digits[0] === '4') return n === 13 || n === 16 || n === 19;
  if ((two >= 51 && two <= 55) || (four >= 2221 && four <= 2720)) return n === 16;
  if (two === 34 || two === 37) return n === 15;
  if ((three >= 300 && three <= 305) || two === 36 || two === 38) return n >= 14 && n <= 16;
  if (four >= 3528 && four <= 3589) return n >= 16 && n <= 19;
  if (four === 6011 || two === 65 || (three >= 644 && three <= 649) || two === 62) return n >= 16 && n <= 19;
  return false;
}

/** Card numbers are written as one run or in groups of four (Amex and Diners: 4-6-5, 4-6-4). */
function cardGrouping(candidate: string): boolean {
  const separators = candidate.replace(/\d/g, '');
  if (separators.length === 0) return true;
  if (new Set(separators).size !== 1) return false;
  const groups = candidate.split(separators[0]!).map((group) => group.length);
  if (groups.join('-') === '4-6-5' || groups.join('-') === '4-6-4') return true;
  return groups.length <= 5 && groups.slice(0, -1).every((length) => length === 4) && groups.at(-1)! <= 4;
}

const creditCard: Scanner = {
  label: PII_LABELS.credit_card.label,
  pattern: /(?<![\w-])\d(?:[ -]?\d){12,18}(?!\w|[ -]\d)/g,
  span: 19 + 18 + 2,
  lead: /(?<![\w-])\d/g,
  accept: (candidate) => {
    const digits = candidate.replace(/\D/g, '');
    return cardGrouping(candidate) && knownIssuer(digits) && luhn(digits);
  },
};

/** IBAN length of each country that issues them (the IBAN registry). */
const IBAN_LENGTHS: Record<string, number> = {
  AD: 24,
  AE: 23,
  AL: 28,
  AT: 20,
  AZ: 28,
  BA: 20,
  BE: 16,
  BG: 22,
  BH: 22,
  BI: 27,
  BR: 29,
  BY: 28,
  CH: 21,
  CR: 22,
  CY: 28,
  CZ: 24,
  DE: 22,
  DJ: 27,
  DK: 18,
  DO: 28,
  EE: 20,
  EG: 29,
  ES: 24,
  FI: 18,
  FK: 18,
  FO: 18,
  FR: 27,
  GB: 22,
  GE: 22,
  GI: 23,
  GL: 18,
  GR: 27,
  GT: 28,
  HN: 28,
  HR: 21,
  HU: 28,
  IE: 22,
  IL: 23,
  IQ: 23,
  IS: 26,
  IT: 27,
  JO: 30,
  KW: 30,
  KZ: 20,
  LB: 28,
  LC: 32,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  LY: 25,
  MC: 27,
  MD: 24,
  ME: 22,
  MK: 19,
  MN: 20,
  MR: 27,
  MT: 31,
  MU: 30,
  NI: 28,
  NL: 18,
  NO: 15,
  OM: 23,
  PK: 24,
  PL: 28,
  PS: 29,
  PT: 25,
  QA: 29,
  RO: 24,
  RS: 22,
  RU: 33,
  SA: 24,
  SC: 31,
  SD: 18,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  SO: 23,
  ST: 25,
  SV: 28,
  TL: 23,
  TN: 24,
  TR: 26,
  UA: 29,
  VA: 22,
  VG: 24,
  XK: 20,
  YE: 30,
};

/** Whether an IBAN (no spaces) passes the ISO 7064 mod-97 check. */
export function ibanChecksum(iban: string): boolean {
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const code = char.charCodeAt(0);
    const value = code >= 65 ? String(code - 55) : char;
    for (const digit of value) remainder = (remainder * 10 + (digit.charCodeAt(0) - 48)) % 97;
  }
  return remainder === 1;
}

const iban: Scanner = {
  label: PII_LABELS.iban.label,
  pattern: /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])/g,
  span: 4 + 7 * 5 + 4 + 1,
  lead: /(?<![A-Za-z0-9])[A-Z](?:$|[A-Z](?:$|\d(?:$|\d)))/g,
  accept: (candidate) => {
    const compact = candidate.replace(/ /g, '');
    return IBAN_LENGTHS[compact.slice(0, 2)] === compact.length && ibanChecksum(compact);
  },
};

// US Social Security numbers, written with dashes or spaces: area 000, 666 and 900-999,
// group 00 and serial 0000 are never issued, nor are the numbers published as examples.
const NEVER_ISSUED_SSNS = new Set(['078051120', '219099999', '123456789']);
const ssn: Scanner = {
  label: PII_LABELS.national_id.label,
  pattern: /(?<![\w-])(?!000|666|9\d\d)\d{3}([- ])(?!00)\d{2}\1(?!0000)\d{4}(?!\w|[- ]?\d)/g,
  span: 11 + 2,
  lead: /(?<![\w-])\d/g,
  accept: (candidate) => !NEVER_ISSUED_SSNS.has(candidate.replace(/\D/g, '')),
};
// UK National Insurance numbers: two prefix letters (D, F, I, Q, U and V never; O never
// second; BG, GB, KN, NK, NT, TN and ZZ not allocated), six digits, a suffix A to D.
const nino: Scanner = {
  label: PII_LABELS.national_id.label,
  pattern:
    /(?<![A-Za-z0-9])(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D](?![A-Za-z0-9])/g,
  span: 13 + 1,
  lead: /(?<![A-Za-z0-9])[A-Z](?:$|[A-Z])/g,
};

const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4 = `(?:${OCTET}\\.){3}${OCTET}`;
const ipv4: Scanner = {
  label: PII_LABELS.ip_address.label,
  pattern: new RegExp(`(?<![\\w.])${IPV4}(?!\\w|\\.\\d)`, 'g'),
  span: 15 + 2,
  lead: /(?<![\w.])\d/g,
};
// IPv6 in full and compressed (`::`) forms, and with an IPv4 tail. Without a digit, words
// such as `abc::def` are more likely code than addresses.
const H = '[0-9A-Fa-f]{1,4}';
const IPV6 = [
  `(?:${H}:){7}${H}`,
  `(?:${H}:){1,6}:${H}`,
  `(?:${H}:){1,5}(?::${H}){1,2}`,
  `(?:${H}:){1,4}(?::${H}){1,3}`,
  `(?:${H}:){1,3}(?::${H}){1,4}`,
  `(?:${H}:){1,2}(?::${H}){1,5}`,
  `${H}:(?::${H}){1,6}`,
  `(?:${H}:){1,4}:${IPV4}`,
  `::(?:[Ff]{4}(?::0{1,4})?:)?${IPV4}`,
  `(?:${H}:){1,7}:`,
  `:(?::${H}){1,7}`,
].join('|');
const ipv6: Scanner = {
  label: PII_LABELS.ip_address.label,
  pattern: new RegExp(`(?<![\\w:])(?:${IPV6})(?![\\w:]|\\.\\d)`, 'g'),
  span: 45 + 2,
  // Every form begins with a group of up to 4 hex digits and a colon, or with `::`.
  lead: /(?<![\w:])(?:[0-9A-Fa-f]{1,4}(?::|$)|:(?::|$))/g,
  accept: (candidate) => /\d/.test(candidate),
};

// Secrets: API keys of well-known shapes, JSON Web Tokens and PEM private key blocks.
const apiKey: Scanner = {
  label: PII_LABELS.secret.label,
  pattern: new RegExp(
    '(?<![\\w-])(?:' +
      [
        'sk-[A-Za-z0-9_-]{20,200}', // OpenAI, Anthropic (sk-ant-…)
        '(?:AKIA|ASIA)[0-9A-Z]{16}', // AWS access key ids
        'gh[pousr]_[A-Za-z0-9]{36,251}', // GitHub tokens
        'github_pat_[A-Za-z0-9_]{22,240}',
        'xox[abposr]-[A-Za-z0-9-]{10,250}', // Slack tokens
        'AIza[0-9A-Za-z_-]{35}', // Google API keys
        '[rs]k_(?:live|test)_[0-9A-Za-z]{16,247}', // Stripe keys
      ].join('|') +
      ')(?![\\w-])',
    'g',
  ),
  span: 255 + 1,
  lead: literalLead('(?<![\\w-])', [
    'sk-',
    'AKIA',
    'ASIA',
    ...[...'pousr'].map((kind) => `gh${kind}_`),
    'github_pat_',
    ...[...'abposr'].map((kind) => `xox${kind}-`),
    'AIza',
    ...['rk_live_', 'rk_test_', 'sk_live_', 'sk_test_'],
  ]),
  // `sk-` followed by words (`sk-this-is-a-placeholder`) is not a key: keys hold digits.
  accept: (candidate) => !candidate.startsWith('sk-') || /\d/.test(candidate),
};
const jwt: Scanner = {
  label: PII_LABELS.secret.label,
  pattern: /(?<![\w-])eyJ[A-Za-z0-9_-]{2,1000}\.eyJ[A-Za-z0-9_-]{2,6000}\.[A-Za-z0-9_-]{0,1000}(?![\w-])/g,
  span: 3 + 1000 + 1 + 3 + 6000 + 1 + 1000 + 1,
  lead: literalLead('(?<![\\w-])', ['eyJ']),
};
/**
 * A PEM private key block, BEGIN line to END line. The block is bounded: up to 8 192
 * characters between the two lines, enough for a 4 096-bit RSA key with its headers. Without
 * an END line within that, the BEGIN line and the key-like text after it (base64, headers,
 * whitespace, up to 8 192 characters) are taken, so a cut-off key is still caught. A stream
 * holding a BEGIN line therefore holds up to 8 382 characters after it before releasing them.
 */
const KEY_LINE = '(?:[A-Z0-9]{1,20} ){0,3}PRIVATE KEY(?: BLOCK)?-----';
const privateKey: Scanner = {
  label: PII_LABELS.secret.label,
  pattern: new RegExp(
    `-----BEGIN ${KEY_LINE}(?:[\\s\\S]{0,8192}?-----END ${KEY_LINE}|[A-Za-z0-9+/=\\s:,-]{0,8192})`,
    'g',
  ),
  span: 11 + 63 + 22 + 8192 + 9 + 63 + 22,
  lead: literalLead('', ['-----BEGIN ']),
};

const SCANNERS: Record<PiiCategory, Scanner[]> = {
  email: [email],
  phone: [internationalPhone, northAmericanPhone],
  credit_card: [creditCard],
  iban: [iban],
  national_id: [ssn, nino],
  ip_address: [ipv4, ipv6],
  secret: [apiKey, jwt, privateKey],
};

/** The scanners of the given categories. */
export function piiScanners(categories: readonly PiiCategory[]): Scanner[] {
  return categories.flatMap((category) => SCANNERS[category]);
}

/** The category a label names. */
export function piiCategoryOf(label: string): PiiCategory | undefined {
  return PII_CATEGORIES.find((category) => PII_LABELS[category].label === label);
}
