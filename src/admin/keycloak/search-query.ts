import { ValidationError } from '../validation.js';

/** The most `key:value` pairs a `q` search may give: each is one condition of the query. */
export const MAX_SEARCH_PAIRS = 20;

/** A quoted part from `at` (the opening quote): its text with \" and \\ unescaped, and where it ends. */
function quoted(q: string, at: number): { text: string; end: number } | undefined {
  let text = '';
  for (let i = at + 1; i < q.length; i++) {
    const c = q[i]!;
    if (c === '"') return { text, end: i + 1 };
    if (c === '\\' && i + 1 < q.length) text += q[++i];
    else text += c;
  }
  return undefined;
}

/** An unquoted part from `at`: up to whitespace (or, for a key, up to the colon). */
function bare(q: string, at: number, stop: RegExp): { text: string; end: number } {
  let end = at;
  while (end < q.length && !stop.test(q[end]!)) end++;
  return { text: q.slice(at, end), end };
}

/**
 * Keycloak's `q` search (UsersResource, its SearchQueryUtils): space-separated `key:value` pairs, a key
 * or a value in double quotes when it holds spaces (\" inside quotes is a quote); a word without a
 * colon is ignored, as Keycloak ignores it. A key given twice keeps its last value (Keycloak's map).
 */
export function parseSearchQuery(q: string): Map<string, string> {
  const pairs = new Map<string, string>();
  let i = 0;
  while (i < q.length) {
    if (/\s/.test(q[i]!)) {
      i++;
      continue;
    }
    const key = q[i] === '"' ? quoted(q, i) : bare(q, i, /[\s:]/);
    if (!key || q[key.end] !== ':') {
      i = bare(q, key?.end ?? i, /\s/).end;
      continue;
    }
    const value = q[key.end + 1] === '"' ? quoted(q, key.end + 1) : bare(q, key.end + 1, /\s/);
    if (!value) throw new ValidationError('q has a quote that is not closed');
    pairs.set(key.text, value.text);
    i = value.end;
  }
  if (pairs.size > MAX_SEARCH_PAIRS) throw new ValidationError(`q may give at most ${MAX_SEARCH_PAIRS} key:value pairs`);
  return pairs;
}

/** The filters of a `q` search: a root property (username, email, firstName, lastName) filters that field, as in Keycloak; any other key an attribute. */
export function userSearchFilters(q: string | undefined): { username?: string; email?: string; firstName?: string; lastName?: string; attributes?: Array<[string, string]> } {
  if (q === undefined) return {};
  const out: { username?: string; email?: string; firstName?: string; lastName?: string; attributes?: Array<[string, string]> } = {};
  const attributes: Array<[string, string]> = [];
  for (const [key, value] of parseSearchQuery(q)) {
    if (key === 'username' || key === 'email' || key === 'firstName' || key === 'lastName') out[key] = value;
    else attributes.push([key, value]);
  }
  return attributes.length > 0 ? { ...out, attributes } : out;
}
