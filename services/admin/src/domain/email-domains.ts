/**
 * Email domains an organisation claims, and the rules of a claim. Pure: no store, no clock.
 */

/**
 * Public suffixes of two labels under which registrable domains sit (`example.co.uk`). A small,
 * explicit list of the common ones, not the full Public Suffix List: a domain under a suffix
 * missing here is a root only when it has two labels.
 */
export const TWO_PART_PUBLIC_SUFFIXES: ReadonlySet<string> = new Set([
  'ac.uk',
  'co.uk',
  'gov.uk',
  'ltd.uk',
  'me.uk',
  'org.uk',
  'plc.uk',
  'com.au',
  'edu.au',
  'gov.au',
  'net.au',
  'org.au',
  'ac.jp',
  'co.jp',
  'ne.jp',
  'or.jp',
  'co.nz',
  'net.nz',
  'org.nz',
  'co.za',
  'org.za',
  'com.br',
  'net.br',
  'org.br',
  'com.cn',
  'net.cn',
  'org.cn',
  'co.in',
  'net.in',
  'org.in',
  'co.kr',
  'or.kr',
  'com.mx',
  'com.sg',
  'com.tr',
  'com.tw',
  'com.hk',
  'co.il',
  'co.id',
  'com.ar',
]);

const LABEL = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;

/**
 * The domain lower-cased, or the reason it is not a DNS name a mailbox can be under: labels of
 * 1 to 63 letters, digits and inner hyphens (punycode `xn--` labels included), at least two,
 * at most 253 characters, no trailing dot, not an IP address.
 */
export function normaliseDomain(input: string): { domain: string } | { error: string } {
  const domain = input.trim().toLowerCase();
  if (domain.length === 0) return { error: 'must not be empty' };
  if (domain.length > 253) return { error: 'must be at most 253 characters' };
  if (domain.endsWith('.')) return { error: 'must not end with a dot' };
  // eslint-disable-next-line no-control-regex
  if (/[^\x00-\x7f]/.test(domain)) return { error: 'must be ASCII (use the punycode form, xn--…)' };
  if (domain.includes(':') || /^\[.*\]$/.test(domain))
    return { error: 'must be a domain name, not an IP address' };
  const labels = domain.split('.');
  if (labels.length < 2) return { error: 'must have at least two labels, such as example.com' };
  for (const label of labels) {
    if (label.length === 0) return { error: 'must not have an empty label' };
    if (label.length > 63) return { error: 'must have labels of at most 63 characters' };
    if (!LABEL.test(label))
      return {
        error: 'must have labels of letters, digits and hyphens, not starting or ending with a hyphen',
      };
  }
  // No top-level domain is numeric: this is an IPv4 address (or looks like one).
  if (/^[0-9]+$/.test(labels.at(-1)!)) return { error: 'must be a domain name, not an IP address' };
  return { domain };
}

/** Whether the domain is itself a public suffix of the list (nobody's to claim). */
export function isPublicSuffix(domain: string): boolean {
  return TWO_PART_PUBLIC_SUFFIXES.has(domain);
}

/**
 * A root (registrable) domain: exactly two labels (`example.com`), or three whose last two are
 * a listed public suffix (`example.co.uk`).
 */
export function isRootDomain(domain: string): boolean {
  const labels = domain.split('.');
  if (labels.length === 2) return !isPublicSuffix(domain);
  return labels.length === 3 && isPublicSuffix(labels.slice(1).join('.'));
}

/** Whether a claim of `claimed` (with or without its subdomains) covers `domain`. */
export function domainCovers(claimed: { domain: string; allowSubdomains: boolean }, domain: string): boolean {
  return domain === claimed.domain || (claimed.allowSubdomains && domain.endsWith(`.${claimed.domain}`));
}
