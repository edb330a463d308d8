import { BlockList, isIPv4, isIPv6 } from 'node:net';

const NAMED: Record<string, Array<[string, number, 'ipv4' | 'ipv6']>> = {
  loopback: [['127.0.0.0', 8, 'ipv4'], ['::1', 128, 'ipv6']],
  linklocal: [['169.254.0.0', 16, 'ipv4'], ['fe80::', 10, 'ipv6']],
  uniquelocal: [['10.0.0.0', 8, 'ipv4'], ['172.16.0.0', 12, 'ipv4'], ['192.168.0.0', 16, 'ipv4'], ['fc00::', 7, 'ipv6']],
};

/** A test of "is this peer one of our reverse proxies", over the configured addresses and CIDRs. */
export type ProxyTrust = (address: string | undefined) => boolean;

export function proxyTrust(entries: string[]): ProxyTrust {
  if (entries.length === 0) return () => false;
  const list = new BlockList();
  for (const e of entries) {
    for (const [addr, bits, type] of NAMED[e] ?? [subnet(e)]) list.addSubnet(addr, bits, type);
  }
  return (address) => {
    if (!address) return false;
    // An IPv4 peer on a dual-stack socket reads ::ffff:a.b.c.d.
    const a = address.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address;
    if (isIPv4(a)) return list.check(a, 'ipv4');
    return isIPv6(a) && list.check(a, 'ipv6');
  };
}

function subnet(entry: string): [string, number, 'ipv4' | 'ipv6'] {
  const [addr = '', bits] = entry.split('/');
  const type = isIPv4(addr) ? 'ipv4' : 'ipv6';
  return [addr, bits === undefined ? (type === 'ipv4' ? 32 : 128) : Number(bits), type];
}

/**
 * RFC 7239 Forwarded: the `for=` values, first hop first, as X-Forwarded-For lists them (quotes
 * removed). Undefined when the header has none; believableChain decides what each one is worth.
 */
export function forwardedFor(header: string): string[] | undefined {
  const out: string[] = [];
  for (const element of header.split(',')) {
    for (const pair of element.split(';')) {
      const m = /^\s*for\s*=\s*"?([^";]*)"?\s*$/i.exec(pair);
      if (m) out.push(m[1]!.trim());
    }
  }
  return out.length > 0 ? out : undefined;
}

/**
 * One forwarded entry as the bare address to keep, or undefined when it is not a syntactically valid
 * IP address: IPv4 or IPv6, IPv4 with a port, IPv6 in brackets with or without a port (RFC 7239 6:
 * `"[2001:db8:cafe::17]:4711"`). "unknown", obfuscated identifiers (RFC 7239 6.2-6.3), host names,
 * zone indexes and anything else are not addresses.
 */
export function forwardedAddress(entry: string): string | undefined {
  // The longest IPv6 text with brackets and a port is 53 characters: anything longer is not one.
  if (entry.length > 64) return undefined;
  let v = entry.trim();
  const bracketed = /^\[([0-9A-Fa-f:.]+)\](?::\d{1,5})?$/.exec(v);
  if (bracketed) v = bracketed[1]!;
  else if (/^[\d.]+:\d{1,5}$/.test(v)) v = v.slice(0, v.lastIndexOf(':'));
  if (isIPv4(v)) return v;
  return isIPv6(v) && !v.includes('%') ? v : undefined;
}

/**
 * The X-Forwarded-For list proxy-addr is to read, from entries in header order (client first): each
 * reduced to its bare address, read from the nearest hop outwards and cut at the first entry that is
 * not an address. Such an entry counts as missing, as if that hop had sent no header: the address is
 * then the hop that wrote it (proxy-addr's answer for a missing entry), and nothing from the client's
 * side of it is believed. Undefined when no entry is left.
 */
export function believableChain(entries: readonly string[]): string | undefined {
  const out: string[] = [];
  for (let i = entries.length - 1; i >= 0; i--) {
    const address = forwardedAddress(entries[i]!);
    if (address === undefined) break;
    out.push(address);
  }
  return out.length > 0 ? out.reverse().join(', ') : undefined;
}

/** An incoming request id kept only when it is short and plain: it goes into every log line. */
export function sanitizeRequestId(v: unknown): string | undefined {
  return typeof v === 'string' && /^[A-Za-z0-9._:@-]{1,64}$/.test(v) ? v : undefined;
}
