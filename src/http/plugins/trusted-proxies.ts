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
 * RFC 7239 Forwarded: the `for=` values, first hop first, as X-Forwarded-For lists them (quotes, brackets
 * and ports removed). Undefined when the header names no address we can read.
 */
export function forwardedFor(header: string): string | undefined {
  const out: string[] = [];
  for (const element of header.split(',')) {
    for (const pair of element.split(';')) {
      const m = /^\s*for\s*=\s*"?([^";]*)"?\s*$/i.exec(pair);
      if (!m) continue;
      let v = m[1]!.trim();
      if (v.startsWith('[')) v = v.slice(1, v.indexOf(']') > 0 ? v.indexOf(']') : undefined);
      else if (/^[\d.]+:\d+$/.test(v)) v = v.slice(0, v.lastIndexOf(':'));
      // "unknown" and obfuscated identifiers (RFC 7239 6.3) are not addresses.
      out.push(isIPv4(v) || isIPv6(v) ? v : 'unknown');
    }
  }
  return out.length > 0 ? out.join(', ') : undefined;
}

/** An incoming request id kept only when it is short and plain: it goes into every log line. */
export function sanitizeRequestId(v: unknown): string | undefined {
  return typeof v === 'string' && /^[A-Za-z0-9._:@-]{1,64}$/.test(v) ? v : undefined;
}
