/**
 * Text that came from a request (a typed username, a client id, a reason) printed on an operator's
 * terminal: control characters could move the cursor, rewrite the title, forge a whole line ("\n...LOGIN
 * success") or reverse what follows (bidi overrides, "Trojan Source", CVE-2021-42574). Each is shown as
 * a visible escape instead; the backslash itself is doubled so an escape cannot be typed to look like one.
 */
// C0, DEL, C1, the line and paragraph separators, and the Unicode bidi controls (UAX #9).
const UNSAFE = /[\\\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

const NAMED: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, (c) => {
    const named = NAMED[c];
    if (named) return named;
    const code = c.codePointAt(0)!;
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
  });
}

// What JSON.stringify leaves as it is and a terminal would act on: DEL, C1, the separators and bidi controls.
const UNSAFE_IN_JSON = /[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

/**
 * A value as JSON a terminal shows as it is (each unsafe character a \u escape: still JSON, still
 * parseable): one line, or indented by `indent` spaces.
 */
export function terminalJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(UNSAFE_IN_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
