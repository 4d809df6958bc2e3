import { isIP, type LookupFunction } from 'node:net';
import { isPublicAddress, type Resolver } from './unsafe-host.ts';

/** A connection to a custom host refused: its name resolved to a non-public address. */
export class NonPublicAddress extends Error {
  constructor(
    readonly hostname: string,
    readonly address: string,
  ) {
    super(`${hostname} resolves to the non-public address ${address}`);
    this.name = 'NonPublicAddress';
  }
}

/**
 * The lookup of connections to custom hosts that are not trusted. The connection resolves the
 * name once, here, and connects only when every address is public: a name that was public when
 * it was checked cannot lead a later connection to a private address (DNS rebinding).
 */
export function publicAddressLookup(resolve: Resolver): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const blocked = addresses.find((address) => !isPublicAddress(address));
        if (blocked !== undefined) {
          callback(new NonPublicAddress(hostname, blocked), '', 0);
          return;
        }
        const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : (options.family ?? 0);
        const usable = addresses
          .map((address) => ({ address, family: isIP(address) }))
          .filter((address) => family === 0 || address.family === family);
        const first = usable[0];
        if (first === undefined) {
          callback(
            Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }),
            '',
            0,
          );
        } else if (options.all) {
          callback(null, usable);
        } else {
          callback(null, first.address, first.family);
        }
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}
