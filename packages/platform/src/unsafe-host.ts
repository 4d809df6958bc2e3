import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { BadRequest } from './errors.ts';

/** Resolves a host name to every address it has. Injected so tests never touch real DNS. */
export type Resolver = (hostname: string) => Promise<string[]>;

export const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/** Cloud metadata services, by name; their addresses are link-local and refused by range too. */
const METADATA_HOSTS = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'metadata.azure.com',
  'instance-data',
  'instance-data.ec2.internal',
]);

/** True when `hostname` is a trusted host or one of its subdomains. */
export function isTrusted(hostname: string, trusted: readonly string[]): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  return trusted.some((entry) => {
    const t = entry
      .toLowerCase()
      .replace(/^\*?\./, '')
      .replace(/\.$/, '');
    return t.length > 0 && (host === t || host.endsWith(`.${t}`));
  });
}

/** Only globally routable unicast addresses are reachable through an inline custom host. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  return parsed.range() === 'unicast';
}

/**
 * The unsafe-host check for a URL a tenant chose (a custom host in a request, an SSO
 * identity provider): http(s) only, no fragment,
 * no credentials, no metadata host, and every address the name resolves to must be public,
 * unless the host is listed in TRUSTED_CUSTOM_HOSTS (subdomains included).
 */
export async function checkCustomHost(
  raw: string,
  options: { trusted: readonly string[]; resolve: Resolver; param: string },
): Promise<URL> {
  const refuse = (why: string) =>
    new BadRequest(`Custom host refused: ${why}.`, { param: options.param, code: 'unsafe_custom_host' });
  if (raw.includes('#')) throw refuse('a URL with a fragment');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw refuse(`scheme ${url.protocol} is not http(s)`);
  if (url.username || url.password) throw refuse('credentials in the URL');
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  if (isTrusted(hostname, options.trusted)) return url;
  if (METADATA_HOSTS.has(hostname.toLowerCase().replace(/\.$/, ''))) throw refuse('a cloud metadata host');
  const addresses = ipaddr.isValid(hostname) ? [hostname] : await options.resolve(hostname).catch(() => []);
  if (addresses.length === 0) throw refuse(`${hostname} does not resolve`);
  const blocked = addresses.find((a) => !isPublicAddress(a));
  if (blocked) throw refuse(`${hostname} resolves to the non-public address ${blocked}`);
  return url;
}
