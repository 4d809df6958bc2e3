import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { BadRequest } from '@switchyard/core';

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

/** The refusal of a custom host: a 400 naming the parameter that gave it. */
export function customHostRefused(why: string, param: string): BadRequest {
  return new BadRequest(`Custom host refused: ${why}.`, { param, code: 'unsafe_custom_host' });
}

/**
 * What the unsafe-host check can tell without resolving the name: a refusal, or the URL and
 * whether its host is trusted. A name that is not trusted still needs its addresses checked.
 */
export type CustomHostInspection =
  { refused: string } | { refused?: undefined; url: URL; hostname: string; trusted: boolean };

export function inspectCustomHost(raw: string, trusted: readonly string[]): CustomHostInspection {
  if (raw.includes('#')) return { refused: 'a URL with a fragment' };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { refused: 'not a valid URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { refused: `scheme ${url.protocol} is not http(s)` };
  if (url.username || url.password) return { refused: 'credentials in the URL' };
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  if (isTrusted(hostname, trusted)) return { url, hostname, trusted: true };
  if (METADATA_HOSTS.has(hostname.toLowerCase().replace(/\.$/, '')))
    return { refused: 'a cloud metadata host' };
  if (ipaddr.isValid(hostname) && !isPublicAddress(hostname))
    return { refused: `${hostname} is not a public address` };
  return { url, hostname, trusted: false };
}

/**
 * The unsafe-host check for a URL a tenant chose (a custom host in a request or a saved
 * integration, an SSO identity provider): http(s) only, no fragment, no credentials, no
 * metadata host, and every address the name resolves to must be public, unless the host is
 * listed in TRUSTED_CUSTOM_HOSTS (subdomains included).
 */
export async function checkCustomHost(
  raw: string,
  options: { trusted: readonly string[]; resolve: Resolver; param: string },
): Promise<URL> {
  const inspected = inspectCustomHost(raw, options.trusted);
  if (inspected.refused !== undefined) throw customHostRefused(inspected.refused, options.param);
  const { url, hostname } = inspected;
  if (inspected.trusted || ipaddr.isValid(hostname)) return url;
  const addresses = await options.resolve(hostname).catch(() => []);
  if (addresses.length === 0) throw customHostRefused(`${hostname} does not resolve`, options.param);
  const blocked = addresses.find((a) => !isPublicAddress(a));
  if (blocked)
    throw customHostRefused(`${hostname} resolves to the non-public address ${blocked}`, options.param);
  return url;
}
