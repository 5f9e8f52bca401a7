import type { OptionsService } from '../../domain/options/index.ts';
import { AppError, defineErrors } from '../../errors.ts';
import {
  type AddressClass,
  type Cidr,
  formatIp,
  type Ip,
  inCidr,
  parseCidr,
  parseIp,
  specialClass,
  unmapped,
} from './addresses.ts';
import { parsePortRange } from './ports.ts';

/**
 * The rule for fetching a URL that a user (or an upstream's answer) supplied: the admin's
 * fetch_setting.* options (new-api's semantics: false = the lists deny, true = the lists allow).
 */
export interface FetchSettings {
  enabled: boolean;
  allowPrivateIp: boolean;
  domainAllowList: boolean;
  domains: readonly string[];
  ipAllowList: boolean;
  ips: readonly string[];
  /** "443" or "8000-9000"; empty means any port. */
  ports: readonly string[];
  ipFilterForDomains: boolean;
}

export function fetchSettings(options: Pick<OptionsService, 'getBoolean' | 'getJson'>): FetchSettings {
  return {
    enabled: options.getBoolean('fetch_setting.enable_ssrf_protection'),
    allowPrivateIp: options.getBoolean('fetch_setting.allow_private_ip'),
    domainAllowList: options.getBoolean('fetch_setting.domain_filter_mode'),
    domains: options.getJson<string[]>('fetch_setting.domain_list'),
    ipAllowList: options.getBoolean('fetch_setting.ip_filter_mode'),
    ips: options.getJson<string[]>('fetch_setting.ip_list'),
    ports: options.getJson<string[]>('fetch_setting.allowed_ports'),
    ipFilterForDomains: options.getBoolean('fetch_setting.apply_ip_filter_for_domain'),
  };
}

/** Why a URL was refused; stable, for logs and tests. */
export type RefusalReason = 'invalid_url' | 'scheme' | 'port' | 'domain' | 'ip' | 'private_ip' | 'dns' | 'setting';

export const OUTBOUND_ERRORS = defineErrors({
  OUTBOUND_URL_REFUSED: {
    status: 403,
    message: {
      zh: '出于安全设置，服务器不会请求该地址（{reason}）：{detail}',
      en: 'The server will not fetch this address ({reason}): {detail}',
    },
  },
});

export class OutboundRefused extends AppError {
  readonly reason: RefusalReason;
  constructor(reason: RefusalReason, detail: string) {
    super(OUTBOUND_ERRORS.OUTBOUND_URL_REFUSED, { reason, detail });
    this.reason = reason;
  }
}

export interface LookupAddress {
  address: string;
  family: number;
}
/** Every address a host name resolves to (node:dns lookup with all: true). */
export type Lookup = (hostname: string) => Promise<LookupAddress[]>;

/** A URL that passed, with the addresses that were checked: the connection must go to one of them. */
export interface CheckedTarget {
  url: URL;
  /** Undefined when the guard is off: connect wherever DNS says. */
  addresses: LookupAddress[] | undefined;
}

const DEFAULT_PORT: Record<string, number> = { 'http:': 80, 'https:': 443 };

/** Checks a URL against the settings, resolving its host; throws OutboundRefused. */
export async function checkOutboundUrl(raw: string, settings: FetchSettings, lookup: Lookup): Promise<CheckedTarget> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundRefused('invalid_url', 'not a URL');
  }
  if (!(url.protocol in DEFAULT_PORT)) throw new OutboundRefused('scheme', `${url.protocol} (only http and https)`);
  if (!settings.enabled) return { url, addresses: undefined };

  const port = url.port === '' ? DEFAULT_PORT[url.protocol]! : Number(url.port);
  if (!portAllowed(port, settings.ports)) throw new OutboundRefused('port', `port ${port} is not allowed`);

  const literal = parseIp(url.hostname);
  if (literal) {
    checkAddress(literal, settings, true, url.hostname);
    return { url, addresses: [{ address: formatIp(literal), family: literal.family }] };
  }

  const host = url.hostname.toLowerCase().replace(/\.+$/, '');
  const listed = settings.domains.some((entry) => domainMatches(host, entry));
  if (settings.domainAllowList && !listed)
    throw new OutboundRefused('domain', `${host} is not in the domain allow list`);
  if (!settings.domainAllowList && listed) throw new OutboundRefused('domain', `${host} is in the domain deny list`);

  let addresses: LookupAddress[];
  try {
    addresses = await lookup(host);
  } catch (error) {
    throw new OutboundRefused('dns', `${host} does not resolve (${(error as { code?: string }).code ?? 'error'})`);
  }
  if (addresses.length === 0) throw new OutboundRefused('dns', `${host} does not resolve`);
  // Every address, not just the first: the connection may try any of them.
  for (const { address } of addresses) {
    const ip = parseIp(address);
    if (!ip) throw new OutboundRefused('dns', `${host} resolves to ${address}`);
    checkAddress(ip, settings, settings.ipFilterForDomains, `${host} (${address})`);
  }
  return { url, addresses };
}

/**
 * An address passes the IP list (when it applies) and is not special-purpose unless private
 * addresses are allowed. An address the admin put on an allow list is allowed even if private:
 * naming it is the clearest way to say so.
 */
function checkAddress(raw: Ip, settings: FetchSettings, applyList: boolean, shown: string): void {
  const ip = unmapped(raw);
  const listed = applyList && ipRanges(settings.ips).some((range) => inCidr(ip, range));
  if (applyList && settings.ipAllowList && !listed)
    throw new OutboundRefused('ip', `${shown} is not in the IP allow list`);
  if (applyList && !settings.ipAllowList && listed) throw new OutboundRefused('ip', `${shown} is in the IP deny list`);
  const special: AddressClass | undefined = specialClass(ip);
  if (special && !settings.allowPrivateIp && !(settings.ipAllowList && listed)) {
    throw new OutboundRefused('private_ip', `${shown} is a ${special} address`);
  }
}

/** The IP list as ranges; one bad entry refuses every fetch rather than silently matching nothing. */
function ipRanges(entries: readonly string[]): Cidr[] {
  return entries
    .filter((entry) => entry.trim() !== '')
    .map((entry) => {
      const range = parseCidr(entry);
      if (!range) throw new OutboundRefused('setting', `fetch_setting.ip_list has an invalid entry "${entry}"`);
      const own = unmapped(range);
      // A mapped range (::ffff:10.0.0.0/104) is the IPv4 range it maps.
      return own === range ? range : { ...own, prefix: Math.max(0, range.prefix - 96) };
    });
}

/** "example.com" is that host only; "*.example.com" is it and every name under it. */
export function domainMatches(host: string, entry: string): boolean {
  const item = entry.trim().toLowerCase().replace(/\.+$/, '');
  if (item === '') return false;
  if (item.startsWith('*.')) {
    const suffix = item.slice(2);
    return host === suffix || host.endsWith(`.${suffix}`);
  }
  return host === item;
}

function portAllowed(port: number, entries: readonly string[]): boolean {
  const ranges = entries
    .filter((entry) => entry.trim() !== '')
    .map((entry) => {
      const range = parsePortRange(entry);
      if (!range) throw new OutboundRefused('setting', `fetch_setting.allowed_ports has an invalid entry "${entry}"`);
      return range;
    });
  return ranges.length === 0 || ranges.some(([low, high]) => port >= low && port <= high);
}
