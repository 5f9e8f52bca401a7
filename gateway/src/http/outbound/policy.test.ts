import { describe, expect, it } from 'vitest';
import { findOptionDefinition } from '../../domain/options/index.ts';
import { checkOutboundUrl, domainMatches, type FetchSettings, fetchSettings, type Lookup } from './policy.ts';

/** The defaults of fetch_setting.* as definitions.ts stores them. */
const defaults: FetchSettings = {
  enabled: true,
  allowPrivateIp: false,
  domainAllowList: false,
  domains: [],
  ipAllowList: false,
  ips: [],
  ports: ['80', '443', '8080', '8443'],
  ipFilterForDomains: true,
};

/** A resolver that knows a few names; the tests never ask the machine's DNS. */
const zone: Record<string, string[]> = {
  'public.example': ['93.184.216.34'],
  'dual.example': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
  'sneaky.example': ['93.184.216.34', '10.0.0.7'],
  'internal.example': ['192.168.1.5'],
  'mapped.example': ['::ffff:127.0.0.1'],
  'cdn.images.example': ['151.101.1.1'],
};
const lookup: Lookup = async (host) => {
  const addresses = zone[host];
  if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

const check = (url: string, settings: Partial<FetchSettings> = {}) =>
  checkOutboundUrl(url, { ...defaults, ...settings }, lookup);
const refusal = async (url: string, settings: Partial<FetchSettings> = {}) => {
  try {
    await check(url, settings);
  } catch (error) {
    const e = error as { code: string; reason: string; message: string };
    return { code: e.code, reason: e.reason, message: e.message };
  }
  return undefined;
};

describe('outbound URL policy', () => {
  it('reads the fetch_setting options with their defaults', () => {
    const stored = (key: string) => findOptionDefinition(key)!.default;
    const options = {
      getBoolean: (key: string) => stored(key) === 'true',
      getJson: (key: string) => JSON.parse(stored(key)),
    };
    expect(fetchSettings(options as never)).toEqual(defaults);
  });

  it('passes a public URL and hands back every address it checked', async () => {
    const target = await check('https://dual.example/hook?x=1');
    expect(target.url.href).toBe('https://dual.example/hook?x=1');
    expect(target.addresses?.map((a) => a.address)).toEqual(['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946']);
    expect((await check('http://93.184.216.34:8080/')).addresses).toEqual([{ address: '93.184.216.34', family: 4 }]);
  });

  it('refuses other schemes and malformed URLs, even with the guard off', async () => {
    for (const settings of [{}, { enabled: false }]) {
      expect(await refusal('file:///etc/passwd', settings)).toMatchObject({
        code: 'OUTBOUND_URL_REFUSED',
        reason: 'scheme',
      });
      expect(await refusal('gopher://public.example/', settings)).toMatchObject({ reason: 'scheme' });
      expect(await refusal('not a url', settings)).toMatchObject({ reason: 'invalid_url' });
    }
  });

  it.each([
    ['http://127.0.0.1/', 'loopback'],
    ['http://localhost.:80/', undefined],
    ['http://[::1]/', 'loopback'],
    ['http://[::ffff:127.0.0.1]/', 'loopback'],
    ['http://[::ffff:7f00:1]/', 'loopback'],
    ['http://0x7f.1/', 'loopback'],
    ['http://2130706433/', 'loopback'],
    ['http://0.0.0.0/', 'unspecified'],
    ['http://10.0.0.1/', 'private'],
    ['http://172.20.1.1/', 'private'],
    ['http://192.168.1.1/', 'private'],
    ['http://169.254.169.254/latest/meta-data/', 'link-local'],
    ['http://100.100.100.200/', 'cgnat'],
    ['http://[fe80::1]/', 'link-local'],
    ['http://[fd00::1]/', 'unique-local'],
    ['http://224.0.0.1/', 'multicast'],
    ['http://[ff02::1]/', 'multicast'],
    ['http://internal.example/', 'private'],
    ['http://mapped.example/', 'loopback'],
  ])('refuses %s as a %s address unless private addresses are allowed', async (url, kind) => {
    if (kind === undefined) {
      // localhost. is not in the test zone: a name that does not resolve is refused as such.
      expect(await refusal(url)).toMatchObject({ reason: 'dns' });
      return;
    }
    const refused = await refusal(url);
    expect(refused).toMatchObject({ code: 'OUTBOUND_URL_REFUSED', reason: 'private_ip' });
    expect(refused!.message).toContain(kind);
    await expect(check(url, { allowPrivateIp: true })).resolves.toBeDefined();
  });

  it('refuses a name when any one of its addresses is private', async () => {
    expect(await refusal('https://sneaky.example/')).toMatchObject({ reason: 'private_ip' });
    expect((await refusal('https://sneaky.example/'))!.message).toContain('10.0.0.7');
  });

  it('checks the port against allowed_ports: single ports, ranges, empty for any', async () => {
    expect(await refusal('http://public.example:22/')).toMatchObject({ reason: 'port' });
    expect(await refusal('https://public.example:8444/')).toMatchObject({ reason: 'port' });
    await expect(check('https://public.example/')).resolves.toBeDefined();
    await expect(check('http://public.example/')).resolves.toBeDefined();
    await expect(check('https://public.example:8443/')).resolves.toBeDefined();
    await expect(check('https://public.example:9001/', { ports: ['443', ' 9000 - 9100 '] })).resolves.toBeDefined();
    expect(await refusal('https://public.example:9101/', { ports: ['9000-9100'] })).toMatchObject({ reason: 'port' });
    await expect(check('https://public.example:22/', { ports: [] })).resolves.toBeDefined();
    expect(await refusal('https://public.example/', { ports: ['443', 'https'] })).toMatchObject({ reason: 'setting' });
    expect(await refusal('https://public.example/', { ports: ['9000-80'] })).toMatchObject({ reason: 'setting' });
  });

  it('applies the domain list as a deny list or an allow list, with *. wildcards', async () => {
    const denied = { domains: ['public.example', '*.images.example'] };
    expect(await refusal('https://public.example/', denied)).toMatchObject({ reason: 'domain' });
    expect(await refusal('https://cdn.images.example/a.png', denied)).toMatchObject({ reason: 'domain' });
    await expect(check('https://dual.example/', denied)).resolves.toBeDefined();

    const allowed = { domainAllowList: true, domains: ['*.images.example'] };
    await expect(check('https://cdn.images.example/a.png', allowed)).resolves.toBeDefined();
    expect(await refusal('https://public.example/', allowed)).toMatchObject({ reason: 'domain' });
    expect(await refusal('https://public.example/', { domainAllowList: true })).toMatchObject({ reason: 'domain' });
    // The domain list is about names: an IP literal is judged by the IP rules alone.
    await expect(check('https://93.184.216.34/', allowed)).resolves.toBeDefined();

    expect(domainMatches('images.example', '*.images.example')).toBe(true);
    expect(domainMatches('evilimages.example', '*.images.example')).toBe(false);
    expect(domainMatches('a.public.example', 'public.example')).toBe(false);
    expect(domainMatches('public.example', ' PUBLIC.example. ')).toBe(true);
  });

  it('applies the IP list (CIDR) as a deny list or an allow list', async () => {
    const denied = { ips: ['93.184.216.0/24'] };
    expect(await refusal('http://93.184.216.34/', denied)).toMatchObject({ reason: 'ip' });
    expect(await refusal('http://[::ffff:93.184.216.34]/', denied)).toMatchObject({ reason: 'ip' });
    expect(await refusal('https://public.example/', denied)).toMatchObject({ reason: 'ip' });
    await expect(check('http://151.101.1.1/', denied)).resolves.toBeDefined();

    const allowed = { ipAllowList: true, ips: ['151.101.0.0/16', '2606:2800::/32'] };
    await expect(check('https://cdn.images.example/', allowed)).resolves.toBeDefined();
    expect(await refusal('https://public.example/', allowed)).toMatchObject({ reason: 'ip' });
    expect(await refusal('http://93.184.216.34/', { ipAllowList: true })).toMatchObject({ reason: 'ip' });
    expect(await refusal('http://1.2.3.4/', { ips: ['1.2.3.4/40'] })).toMatchObject({ reason: 'setting' });
  });

  it('lets an allow-listed private address through: the admin named it', async () => {
    const allowed = { ipAllowList: true, ips: ['127.0.0.1', '10.0.0.0/8'] };
    await expect(check('http://127.0.0.1/', allowed)).resolves.toBeDefined();
    await expect(check('http://[::ffff:10.1.2.3]/', allowed)).resolves.toBeDefined();
    expect(await refusal('http://192.168.1.1/', allowed)).toMatchObject({ reason: 'ip' });
    // A deny list never admits a private address.
    expect(await refusal('http://127.0.0.1/', { ips: ['8.8.8.8'] })).toMatchObject({ reason: 'private_ip' });
  });

  it('leaves the IP list out for names when apply_ip_filter_for_domain is off, never the private check', async () => {
    const settings = { ipFilterForDomains: false, ipAllowList: true, ips: ['151.101.0.0/16'] };
    await expect(check('https://public.example/', settings)).resolves.toBeDefined();
    expect(await refusal('https://internal.example/', settings)).toMatchObject({ reason: 'private_ip' });
    // IP literals still meet the list.
    expect(await refusal('http://93.184.216.34/', settings)).toMatchObject({ reason: 'ip' });
  });

  it('refuses a name that does not resolve', async () => {
    expect(await refusal('https://nowhere.example/')).toMatchObject({ reason: 'dns' });
  });

  it('checks nothing but the scheme when enable_ssrf_protection is off', async () => {
    const off = { enabled: false };
    for (const url of ['http://127.0.0.1:22/', 'http://internal.example/', 'https://nowhere.example/']) {
      await expect(check(url, off)).resolves.toMatchObject({ addresses: undefined });
    }
  });
});
