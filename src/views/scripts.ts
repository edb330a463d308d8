/**
 * The few scripts our pages run, served as same-origin files: the pages' CSP is script-src 'self', so
 * no inline script runs. The one exception is the front-channel logout page's, whose own CSP names it
 * by hash (src/oidc/frontchannel-logout.ts).
 */
export const FORM_POST_SCRIPT_PATH = '/auth/resources/form-post.js';

/** Submits the form-post response at once (Form Post Response Mode 2). */
export const FORM_POST_SCRIPT = `'use strict';
document.getElementById('form-post').submit();
`;

export const STATUS_IFRAME_SCRIPT_PATH = '/auth/resources/login-status-iframe.js';

/**
 * keycloak-js's session-status protocol (checkLoginIframe): the application posts
 * "<client_id> <session_state>"; the frame answers "unchanged" when the session-state cookie still names
 * that session, "changed" when it does not, and "error" when the server says this client does not allow
 * the sender's origin (asked once, at `<this page>/init`).
 */
export const STATUS_IFRAME_SCRIPT = `'use strict';
(function () {
  var confirmed = null;
  function currentSession() {
    var m = /(?:^|;\\s*)RG_SESSION_STATE=([^;]*)/.exec(document.cookie);
    return m ? decodeURIComponent(m[1]) : '';
  }
  function verdict(sessionState) {
    return sessionState === currentSession() ? 'unchanged' : 'changed';
  }
  window.addEventListener('message', function (event) {
    if (typeof event.data !== 'string' || !event.source) return;
    var parts = event.data.split(' ');
    if (parts.length !== 2) return;
    var clientId = parts[0];
    var sessionState = parts[1];
    var origin = event.origin;
    var source = event.source;
    function answer(result) {
      source.postMessage(result, origin);
    }
    if (confirmed) {
      answer(confirmed.clientId === clientId && confirmed.origin === origin ? verdict(sessionState) : 'error');
      return;
    }
    var url = window.location.pathname + '/init?client_id=' + encodeURIComponent(clientId) + '&origin=' + encodeURIComponent(origin);
    fetch(url, { credentials: 'same-origin', cache: 'no-store' }).then(function (res) {
      if (res.status !== 204) return answer('error');
      confirmed = { clientId: clientId, origin: origin };
      answer(verdict(sessionState));
    }, function () {
      answer('error');
    });
  }, false);
})();
`;

export const THIRD_PARTY_STEP1_SCRIPT_PATH = '/auth/resources/3p-cookies-step1.js';
export const THIRD_PARTY_STEP2_SCRIPT_PATH = '/auth/resources/3p-cookies-step2.js';

/**
 * keycloak-js's third-party cookie check: step 1 (framed by the application) sets test cookies and
 * moves to step 2, which tells the application "supported" when a cookie survived, else "unsupported".
 * The message carries nothing else, so any parent may receive it, as with Keycloak's pages.
 */
export const THIRD_PARTY_STEP1_SCRIPT = `'use strict';
document.cookie = 'RG_3P_COOKIE_SAMESITE=supported; Max-Age=60; SameSite=None; Secure';
document.cookie = 'RG_3P_COOKIE=supported; Max-Age=60';
window.location.replace('step2.html');
`;

export const THIRD_PARTY_STEP2_SCRIPT = `'use strict';
(function () {
  var supported = /(?:^|;\\s*)RG_3P_COOKIE(_SAMESITE)?=supported/.test(document.cookie);
  document.cookie = 'RG_3P_COOKIE_SAMESITE=; Max-Age=0; SameSite=None; Secure';
  document.cookie = 'RG_3P_COOKIE=; Max-Age=0';
  window.parent.postMessage(supported ? 'supported' : 'unsupported', '*');
})();
`;

/** Every script file, by path. */
export const SCRIPTS: ReadonlyMap<string, string> = new Map([
  [FORM_POST_SCRIPT_PATH, FORM_POST_SCRIPT],
  [STATUS_IFRAME_SCRIPT_PATH, STATUS_IFRAME_SCRIPT],
  [THIRD_PARTY_STEP1_SCRIPT_PATH, THIRD_PARTY_STEP1_SCRIPT],
  [THIRD_PARTY_STEP2_SCRIPT_PATH, THIRD_PARTY_STEP2_SCRIPT],
]);
