import { createHash } from 'node:crypto';
import type { Client } from '../storage/types.js';
import { redirectWith } from '../oauth/authorize/checks.js';

/** One client's front-channel logout URL as the logout page frames it. */
export interface LogoutFrame {
  clientId: string;
  /** The client's name (or id), listed on the page. */
  clientName: string;
  /** frontchannel.logout.url, with iss and sid when the client asked for them. */
  src: string;
  /** Its origin, for the page's CSP frame-src. */
  origin: string;
}

/**
 * The frames of one ended browser session (OpenID Connect Front-Channel Logout 1.0, 2: the OP renders
 * `<iframe src="frontchannel_logout_uri">` for each RP the user is logged in to). `clients` are those
 * that took part in the session (the back-channel sender's list, src/oidc/end-session.ts); a client takes
 * part when it is enabled, has frontchannelLogout on and a URL. With session required, iss and sid are
 * added as query parameters (section 2: both or neither, the URL's own query retained), sid being the
 * session's id, the ID tokens' sid claim.
 */
export function logoutFrames(issuer: string, sessionId: string, clients: Iterable<Client>): LogoutFrame[] {
  const frames: LogoutFrame[] = [];
  for (const c of clients) {
    const f = c.frontchannelLogout;
    if (!c.enabled || !f.enabled || f.url === null) continue;
    frames.push({
      clientId: c.clientId,
      clientName: c.name ?? c.clientId,
      src: f.sessionRequired ? redirectWith(f.url, { iss: issuer, sid: sessionId }) : f.url,
      origin: new URL(f.url).origin,
    });
  }
  return frames.sort((a, b) => (a.clientId < b.clientId ? -1 : a.clientId > b.clientId ? 1 : 0));
}

/** How long the page waits for the frames before it moves on anyway (a client that never answers). */
export const FRONTCHANNEL_TIMEOUT_MS = 4000;

/**
 * The logout page's only script, inline and allowed by its hash (the CSP names it, nothing else inline
 * runs): once the window has loaded (which waits for every frame) or after the timeout, whichever comes
 * first, it follows the Continue link. Section 4 leaves waiting for the frames to the OP. Without
 * JavaScript the user follows the link.
 */
export const FRONTCHANNEL_SCRIPT = `(function () {
  var done = false;
  function go() {
    if (done) return;
    done = true;
    var link = document.getElementById('continue');
    if (link) window.location.replace(link.href);
  }
  window.addEventListener('load', go);
  setTimeout(go, ${FRONTCHANNEL_TIMEOUT_MS});
})();`;

/** The script's CSP hash source. */
export const FRONTCHANNEL_SCRIPT_HASH = `'sha256-${createHash('sha256').update(FRONTCHANNEL_SCRIPT, 'utf8').digest('base64')}'`;
