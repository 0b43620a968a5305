/**
 * The SSRF guard (docs/design.md "Contracts"): a destination may only reach public
 * unicast addresses, unless private networks are allowed (local development, tests).
 *
 * - A literal address in a URL is refused at creation (`checkUrlHost`).
 * - A hostname is checked after resolution, at connect time, on every address returned:
 *   undici hands our `lookup` to `net.connect`, which asks it for all addresses
 *   (autoSelectFamily), so DNS rebinding between creation and delivery does not help.
 * - IP-literal hosts skip `lookup`; the delivery checks them itself (`checkUrlHost`).
 * - IPv4-mapped IPv6 (`::ffff:10.0.0.1`) is unwrapped before the check; any other IPv6
 *   address must be global unicast (2000::/3).
 */

import dns, { type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export const NOT_ALLOWED = 'destination_not_allowed';

export type LookupFunction = (
  hostname: string,
  options: dns.LookupOptions,
  callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void;

export class DestinationNotAllowedError extends Error {
  readonly code = NOT_ALLOWED;
  readonly address: string;
  constructor(host: string, address: string) {
    super(`${host} resolves to ${address}, which is not a public address`);
    this.name = 'DestinationNotAllowedError';
    this.address = address;
  }
}

/** IPv6's global unicast block: every public IPv6 address is in it. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/**
 * True for anything but a public unicast address: loopback, private, link-local (cloud
 * metadata), unique-local, CGNAT, multicast, reserved, unspecified. An IPv6 address other than
 * IPv4-mapped must be in 2000::/3 as well: ipaddr.js rates other ::/96 addresses, such as the
 * deprecated IPv4-compatible `::169.254.169.254`, "unicast".
 */
export function isForbiddenAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return true;
  const parsed = ipaddr.parse(canonical(address));
  if (parsed.kind() === 'ipv4') return parsed.range() !== 'unicast';
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().range() !== 'unicast';
  return !(v6.match(GLOBAL_UNICAST_V6) && v6.range() === 'unicast');
}

/**
 * An IPv6 address as the network reads it: ipaddr.js parses the IPv4-compatible form
 * `::169.254.169.254` as if it were IPv4-mapped (`::ffff:…`), which it is not; the WHATWG
 * URL parser writes it `::a9fe:a9fe`. A zone id (`fe80::1%eth0`) stays as it is.
 */
function canonical(address: string): string {
  if (!address.includes(':')) return address;
  const host = URL.parse(`http://[${address}]/`)?.hostname;
  return host === undefined ? address : host.slice(1, -1);
}

/** The address of an IP-literal URL host (brackets stripped), or undefined for a hostname. */
function literalAddress(hostname: string): string | undefined {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) ? bare : undefined;
}

/** Refuses a URL whose host is a literal forbidden address. Hostnames pass (checked at connect). */
export function checkUrlHost(url: URL, allowPrivate: boolean): DestinationNotAllowedError | undefined {
  if (allowPrivate) return undefined;
  const literal = literalAddress(url.hostname);
  if (literal !== undefined && isForbiddenAddress(literal))
    return new DestinationNotAllowedError(url.hostname, literal);
  if (url.hostname === 'localhost' || url.hostname.endsWith('.localhost')) {
    return new DestinationNotAllowedError(url.hostname, '127.0.0.1');
  }
  return undefined;
}

/** `lookup`, for `net.connect`, refusing forbidden addresses before any connection. */
export function guardedLookup(
  allowPrivate: boolean,
  lookup: LookupFunction = dns.lookup as LookupFunction,
): LookupFunction {
  if (allowPrivate) return lookup;
  return (hostname, options, callback) => {
    lookup(hostname, options, (err, address, family) => {
      if (err) return callback(err, address, family);
      const list = Array.isArray(address) ? address.map((a) => a.address) : [address];
      const bad = list.find(isForbiddenAddress);
      if (bad !== undefined) return callback(new DestinationNotAllowedError(hostname, bad), address, family);
      callback(null, address, family);
    });
  };
}

/**
 * The check `guardedLookup` makes at connect, made before an egress proxy is asked (which
 * resolves the host itself): a host resolving to a forbidden address is refused
 * (`destination_not_allowed`), one that does not resolve fails with the resolver's code. A
 * literal address is `checkUrlHost`'s.
 */
export function checkResolvedHost(
  url: URL,
  guarded: LookupFunction,
): Promise<{ code: string; message: string } | undefined> {
  if (literalAddress(url.hostname) !== undefined) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    guarded(url.hostname, { all: true }, (err) => {
      resolve(err ? { code: String(err.code ?? 'request_failed'), message: err.message } : undefined);
    });
  });
}
