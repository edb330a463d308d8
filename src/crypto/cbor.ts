/**
 * A small CBOR decoder (RFC 8949) for what WebAuthn sends: attestation objects and COSE keys (W3C
 * WebAuthn Level 2, 6.5 and 6.5.2; CTAP2's canonical encoding). Integers, byte and text strings, arrays,
 * maps, false/true/null; no tags, floats, or indefinite lengths (CTAP2 never sends them). Bounded: at most
 * 16 levels deep and as many items as bytes, so that hostile input costs linear time and never throws
 * anything but CborError.
 */

export class CborError extends Error {}

export type CborValue = number | bigint | Uint8Array | string | boolean | null | CborValue[] | Map<CborValue, CborValue>;

const MAX_DEPTH = 16;

interface Cursor {
  buf: Uint8Array;
  pos: number;
}

function need(c: Cursor, n: number): void {
  if (n < 0 || c.pos + n > c.buf.length) throw new CborError('CBOR: truncated');
}

/** The argument of a head (RFC 8949 3): the additional information, or the 1, 2, 4 or 8 bytes after it. */
function argument(c: Cursor, info: number): number | bigint {
  if (info < 24) return info;
  const view = new DataView(c.buf.buffer, c.buf.byteOffset, c.buf.byteLength);
  switch (info) {
    case 24:
      need(c, 1);
      return c.buf[c.pos++]!;
    case 25: {
      need(c, 2);
      const v = view.getUint16(c.pos);
      c.pos += 2;
      return v;
    }
    case 26: {
      need(c, 4);
      const v = view.getUint32(c.pos);
      c.pos += 4;
      return v;
    }
    case 27: {
      need(c, 8);
      const v = view.getBigUint64(c.pos);
      c.pos += 8;
      return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
    }
    default:
      throw new CborError('CBOR: indefinite lengths and reserved heads are not accepted');
  }
}

function length(c: Cursor, info: number): number {
  const n = argument(c, info);
  if (typeof n !== 'number' || n > c.buf.length) throw new CborError('CBOR: length beyond the input');
  return n;
}

function item(c: Cursor, depth: number): CborValue {
  if (depth > MAX_DEPTH) throw new CborError('CBOR: nested too deep');
  need(c, 1);
  const head = c.buf[c.pos++]!;
  const major = head >> 5;
  const info = head & 0x1f;
  switch (major) {
    case 0:
      return argument(c, info);
    case 1: {
      const n = argument(c, info);
      return typeof n === 'number' ? -1 - n : -1n - n;
    }
    case 2: {
      const n = length(c, info);
      need(c, n);
      const out = c.buf.slice(c.pos, c.pos + n);
      c.pos += n;
      return out;
    }
    case 3: {
      const n = length(c, info);
      need(c, n);
      const bytes = c.buf.subarray(c.pos, c.pos + n);
      c.pos += n;
      try {
        return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      } catch {
        throw new CborError('CBOR: text string is not UTF-8');
      }
    }
    case 4: {
      const n = length(c, info);
      const out: CborValue[] = [];
      for (let i = 0; i < n; i++) out.push(item(c, depth + 1));
      return out;
    }
    case 5: {
      const n = length(c, info);
      const out = new Map<CborValue, CborValue>();
      for (let i = 0; i < n; i++) {
        const k = item(c, depth + 1);
        if (typeof k !== 'number' && typeof k !== 'string') throw new CborError('CBOR: map keys must be integers or text');
        if (out.has(k)) throw new CborError('CBOR: duplicate map key');
        out.set(k, item(c, depth + 1));
      }
      return out;
    }
    case 7:
      if (info === 20) return false;
      if (info === 21) return true;
      if (info === 22) return null;
      throw new CborError('CBOR: floats and other simple values are not accepted');
    default:
      throw new CborError('CBOR: tags are not accepted');
  }
}

/** Decodes the first item of `buf`; `end` is where it ends (authenticator data carries extensions after the key). */
export function decodeCborPrefix(buf: Uint8Array, offset = 0): { value: CborValue; end: number } {
  const c: Cursor = { buf, pos: offset };
  const value = item(c, 0);
  return { value, end: c.pos };
}

/** Decodes exactly one item: trailing bytes are an error. */
export function decodeCbor(buf: Uint8Array): CborValue {
  const { value, end } = decodeCborPrefix(buf);
  if (end !== buf.length) throw new CborError('CBOR: trailing bytes');
  return value;
}
