import { isIPv4 } from 'node:net';

/**
 * IP addresses as bytes, CIDR ranges, and the special-purpose ranges (RFC 6890 and its IPv6 kin) that
 * a server-side fetch of a user's URL must not reach: they lead into the gateway's own network.
 */
export interface Ip {
  family: 4 | 6;
  bytes: Uint8Array;
}

export interface Cidr extends Ip {
  prefix: number;
}

export type AddressClass =
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'unique-local'
  | 'cgnat'
  | 'multicast'
  | 'documentation'
  | 'reserved';

/** Dotted-quad IPv4 or any IPv6 spelling (compressed, with a dotted tail, with a %zone). */
export function parseIp(text: string): Ip | undefined {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (isIPv4(bare)) return { family: 4, bytes: Uint8Array.from(bare.split('.').map(Number)) };
  const v6 = parseIpv6(bare.replace(/%.*$/, ''));
  return v6 && { family: 6, bytes: v6 };
}

function parseIpv6(text: string): Uint8Array | undefined {
  if (!/^[0-9a-fA-F:.]+$/.test(text)) return undefined;
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groups = (part: string | undefined): number[] | undefined => {
    if (!part) return [];
    const out: number[] = [];
    const pieces = part.split(':');
    for (const [i, piece] of pieces.entries()) {
      if (i === pieces.length - 1 && piece.includes('.')) {
        if (!isIPv4(piece)) return undefined;
        const [a, b, c, d] = piece.split('.').map(Number) as [number, number, number, number];
        out.push((a << 8) | b, (c << 8) | d);
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(piece)) return undefined;
        out.push(Number.parseInt(piece, 16));
      }
    }
    return out;
  };
  const head = groups(halves[0]);
  const tail = groups(halves[1]);
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const all = [...head, ...Array<number>(halves.length === 1 ? 0 : missing).fill(0), ...tail];
  const bytes = new Uint8Array(16);
  for (const [i, group] of all.entries()) {
    bytes[2 * i] = group >> 8;
    bytes[2 * i + 1] = group & 0xff;
  }
  return bytes;
}

/** "10.0.0.0/8", "2001:db8::/32", or a single address (its own /32 or /128). */
export function parseCidr(text: string): Cidr | undefined {
  const [address, prefixText, extra] = text.trim().split('/');
  if (extra !== undefined || address === undefined) return undefined;
  const ip = parseIp(address);
  if (!ip) return undefined;
  const width = ip.family === 4 ? 32 : 128;
  if (prefixText === undefined) return { ...ip, prefix: width };
  if (!/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  return prefix <= width ? { ...ip, prefix } : undefined;
}

export function inCidr(ip: Ip, cidr: Cidr): boolean {
  if (ip.family !== cidr.family) return false;
  const whole = cidr.prefix >> 3;
  for (let i = 0; i < whole; i++) if (ip.bytes[i] !== cidr.bytes[i]) return false;
  const rest = cidr.prefix & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return ((ip.bytes[whole]! ^ cidr.bytes[whole]!) & mask) === 0;
}

/** An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is the IPv4 address it maps: lists and ranges see that one. */
export function unmapped(ip: Ip): Ip {
  return ip.family === 6 && inCidr(ip, MAPPED) ? { family: 4, bytes: ip.bytes.slice(12) } : ip;
}

export function formatIp(ip: Ip): string {
  if (ip.family === 4) return ip.bytes.join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((ip.bytes[i]! << 8) | ip.bytes[i + 1]!).toString(16));
  return groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::');
}

const cidr = (text: string): Cidr => parseCidr(text)!;
const MAPPED = cidr('::ffff:0:0/96');

const SPECIAL_V4: ReadonlyArray<[Cidr, AddressClass]> = [
  [cidr('0.0.0.0/8'), 'unspecified'],
  [cidr('10.0.0.0/8'), 'private'],
  [cidr('100.64.0.0/10'), 'cgnat'],
  [cidr('127.0.0.0/8'), 'loopback'],
  [cidr('169.254.0.0/16'), 'link-local'],
  [cidr('172.16.0.0/12'), 'private'],
  [cidr('192.0.0.0/24'), 'reserved'],
  [cidr('192.0.2.0/24'), 'documentation'],
  [cidr('192.88.99.0/24'), 'reserved'],
  [cidr('192.168.0.0/16'), 'private'],
  [cidr('198.18.0.0/15'), 'reserved'],
  [cidr('198.51.100.0/24'), 'documentation'],
  [cidr('203.0.113.0/24'), 'documentation'],
  [cidr('224.0.0.0/4'), 'multicast'],
  [cidr('240.0.0.0/4'), 'reserved'],
];

const SPECIAL_V6: ReadonlyArray<[Cidr, AddressClass]> = [
  [cidr('::/128'), 'unspecified'],
  [cidr('::1/128'), 'loopback'],
  [cidr('64:ff9b:1::/48'), 'private'],
  [cidr('100::/64'), 'reserved'],
  [cidr('2001:db8::/32'), 'documentation'],
  [cidr('fc00::/7'), 'unique-local'],
  [cidr('fe80::/10'), 'link-local'],
  // Site-local: deprecated, but still routed inside some networks.
  [cidr('fec0::/10'), 'private'],
  [cidr('ff00::/8'), 'multicast'],
];

/**
 * IPv6 forms that carry an IPv4 address a packet may end up at: mapped, IPv4-compatible, NAT64 and
 * 6to4. ::ffff:127.0.0.1 or 64:ff9b::a00:1 must count as the IPv4 address inside.
 */
function embeddedIpv4(ip: Ip): Ip | undefined {
  if (ip.family !== 6) return undefined;
  const { bytes } = ip;
  if (inCidr(ip, MAPPED) || inCidr(ip, COMPATIBLE) || inCidr(ip, NAT64)) return { family: 4, bytes: bytes.slice(12) };
  if (inCidr(ip, SIX_TO_FOUR)) return { family: 4, bytes: bytes.slice(2, 6) };
  return undefined;
}
const COMPATIBLE = cidr('::/96');
const NAT64 = cidr('64:ff9b::/96');
const SIX_TO_FOUR = cidr('2002::/16');

/** Which special-purpose range an address is in, or undefined for an ordinary public address. */
export function specialClass(ip: Ip): AddressClass | undefined {
  const table = ip.family === 4 ? SPECIAL_V4 : SPECIAL_V6;
  const own = table.find(([range]) => inCidr(ip, range))?.[1];
  if (own) return own;
  const inner = embeddedIpv4(ip);
  return inner && specialClass(inner);
}
