/**
 * LDAP injection: what a user typed never becomes filter or DN syntax.
 *
 * RFC 4515 3: in a filter's assertion value, `*` (2A), `(` (28), `)` (29), `\` (5C) and NUL (00) must be
 * written as `\` and two hex digits. Every other character may stay; non-ASCII stays UTF-8 (the
 * filter is a UTF-8 string).
 */
export function escapeFilterValue(value: string): string {
  let out = '';
  for (const ch of value) {
    switch (ch) {
      case '*':
        out += '\\2a';
        break;
      case '(':
        out += '\\28';
        break;
      case ')':
        out += '\\29';
        break;
      case '\\':
        out += '\\5c';
        break;
      case '\0':
        out += '\\00';
        break;
      default:
        out += ch;
    }
  }
  return out;
}

/**
 * RFC 4514 2.4: an attribute value in a DN string. `"`, `+`, `,`, `;`, `<`, `>` and `\` are escaped with
 * a backslash anywhere; a space or `#` at the start and a space at the end too; NUL as `\00`. (`=` may
 * stay unescaped by 2.4, but is escaped too, as many servers' own output does.)
 */
export function escapeDnValue(value: string): string {
  let out = '';
  const chars = [...value];
  chars.forEach((ch, i) => {
    if (ch === '\0') out += '\\00';
    else if ('"+,;<>\\='.includes(ch)) out += '\\' + ch;
    else if (ch === ' ' && (i === 0 || i === chars.length - 1)) out += '\\ ';
    else if (ch === '#' && i === 0) out += '\\#';
    else out += ch;
  });
  return out;
}

/** An attribute description (RFC 4512 2.5: a descr, letters, digits and hyphens, or a numeric OID): configured, not typed, but never trusted into a filter. */
export function isAttributeName(name: string): boolean {
  return /^(?:[A-Za-z][A-Za-z0-9-]{0,127}|\d+(?:\.\d+){0,63})$/.test(name);
}
