/**
 * The text fields of a multipart/form-data body (RFC 7578), as keycloak-admin-client sends a FormData
 * (organizations.invite, inviteExistingUser). Files are ignored; a field named twice keeps its first
 * value; anything malformed is an empty result, never an error the caller did not ask for.
 */
export function multipartFields(body: string, contentType: string | undefined): Record<string, string> {
  const boundary = /boundary=(?:"([^"]{1,70})"|([^;\s]{1,70}))/i.exec(contentType ?? '');
  const b = boundary?.[1] ?? boundary?.[2];
  const fields: Record<string, string> = {};
  if (!b) return fields;
  for (const part of body.split(`--${b}`).slice(1)) {
    if (part.startsWith('--')) break;
    const end = part.indexOf('\r\n\r\n');
    if (end < 0) continue;
    const headers = part.slice(0, end);
    const name = /content-disposition:[^\r\n]*;\s*name="([^"]{1,100})"/i.exec(headers)?.[1];
    if (!name || /filename=/i.test(headers) || name in fields) continue;
    fields[name] = part.slice(end + 4).replace(/\r\n$/, '');
  }
  return fields;
}
