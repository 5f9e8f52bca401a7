import { describe, expect, it } from 'vitest';
import { formatIp, inCidr, parseCidr, parseIp, specialClass, unmapped } from './addresses.ts';

const ip = (text: string) => {
  const parsed = parseIp(text);
  if (!parsed) throw new Error(`not an address: ${text}`);
  return parsed;
};

describe('addresses', () => {
  it('parses IPv4 and every IPv6 spelling, and refuses the rest', () => {
    expect([...ip('192.168.1.20').bytes]).toEqual([192, 168, 1, 20]);
    expect(formatIp(ip('::1'))).toBe('::1');
    expect(formatIp(ip('[2001:db8::8a2e:370:7334]'))).toBe('2001:db8::8a2e:370:7334');
    expect(formatIp(ip('fe80::1%eth0'))).toBe('fe80::1');
    expect(formatIp(ip('::ffff:127.0.0.1'))).toBe('::ffff:7f00:1');
    expect(formatIp(ip('1:2:3:4:5:6:7:8'))).toBe('1:2:3:4:5:6:7:8');
    for (const bad of ['', 'example.com', '1.2.3', '256.1.1.1', '1::2::3', '1:2:3:4:5:6:7:8:9', '12345::', ':::']) {
      expect(parseIp(bad), bad).toBeUndefined();
    }
  });

  it.each([
    ['0.0.0.0', 'unspecified'],
    ['127.0.0.1', 'loopback'],
    ['127.255.1.2', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.0.10', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.254', 'cgnat'],
    ['224.0.0.251', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['192.0.2.1', 'documentation'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['fe80::1', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    // IPv4 hidden in IPv6: mapped, IPv4-compatible, NAT64 and 6to4 count as the IPv4 inside.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['::10.0.0.1', 'private'],
    ['64:ff9b::c0a8:1', 'private'],
    ['2002:7f00:1::', 'loopback'],
  ])('%s is %s', (text, expected) => {
    expect(specialClass(ip(text))).toBe(expected);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '2002:808:808::',
  ])('%s is an ordinary address', (text) => {
    expect(specialClass(ip(text))).toBeUndefined();
  });

  it('matches CIDR ranges of both families, bit by bit', () => {
    const range = parseCidr('10.20.0.0/14')!;
    expect(inCidr(ip('10.23.255.255'), range)).toBe(true);
    expect(inCidr(ip('10.24.0.0'), range)).toBe(false);
    expect(inCidr(ip('::ffff:10.20.0.1'), range)).toBe(false);
    expect(inCidr(unmapped(ip('::ffff:10.20.0.1')), range)).toBe(true);
    expect(inCidr(ip('2001:db8:ff::1'), parseCidr('2001:db8::/32')!)).toBe(true);
    expect(inCidr(ip('2001:db9::1'), parseCidr('2001:db8::/32')!)).toBe(false);
    expect(inCidr(ip('203.0.113.7'), parseCidr('203.0.113.7')!)).toBe(true);
    expect(inCidr(ip('203.0.113.8'), parseCidr(' 203.0.113.7 ')!)).toBe(false);
    expect(inCidr(ip('8.8.8.8'), parseCidr('0.0.0.0/0')!)).toBe(true);
    for (const bad of ['10.0.0.0/33', '::/129', '10.0.0.0/x', '10.0.0/8', 'a.b.c.d/8', '10.0.0.0/8/1']) {
      expect(parseCidr(bad), bad).toBeUndefined();
    }
  });
});
