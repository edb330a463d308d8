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
export const WEBAUTHN_SCRIPT_PATH = '/auth/resources/webauthn.js';

/**
 * The security key pages (data-webauthn="create" or "get" on the form, the options as JSON in
 * data-options, binary members base64url): on submit, navigator.credentials.create() or get(), then the
 * response's members, base64url, into the form's hidden fields, and the form is posted. An error of the
 * browser (cancelled, timed out, no key) is said on the page; nothing is posted.
 */
export const WEBAUTHN_SCRIPT = `'use strict';
(function () {
  var form = document.querySelector('form[data-webauthn]');
  if (!form) return;
  var status = document.getElementById('webauthn-status');
  function say(text) {
    if (status) { status.textContent = text; status.hidden = false; }
  }
  // The page's language: its words in data attributes (none on an English page).
  function words(name, english) {
    return (status && status.getAttribute('data-' + name)) || english;
  }
  if (!window.PublicKeyCredential || !navigator.credentials) {
    say(words('unsupported', 'This browser cannot use security keys.'));
    return;
  }
  function decode(s) {
    var b = atob(s.replace(/-/g, '+').replace(/_/g, '/') + '===='.slice(s.length % 4 || 4));
    var out = new Uint8Array(b.length);
    for (var i = 0; i < b.length; i++) out[i] = b.charCodeAt(i);
    return out.buffer;
  }
  function encode(buf) {
    var bytes = new Uint8Array(buf);
    var s = '';
    for (var i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
    return btoa(s).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
  }
  function set(name, value) {
    form.elements.namedItem(name).value = value;
  }
  function descriptors(list) {
    return (list || []).map(function (c) {
      var d = { type: c.type, id: decode(c.id) };
      if (c.transports) d.transports = c.transports;
      return d;
    });
  }
  var mode = form.getAttribute('data-webauthn');
  var busy = false;
  form.addEventListener('submit', function (event) {
    event.preventDefault();
    if (busy) return;
    busy = true;
    if (status) status.hidden = true;
    var o = JSON.parse(form.getAttribute('data-options'));
    o.challenge = decode(o.challenge);
    var done = function (cred) {
      var r = cred.response;
      if (mode === 'create') {
        set('client_data_json', encode(r.clientDataJSON));
        set('attestation_object', encode(r.attestationObject));
        set('transports', typeof r.getTransports === 'function' ? r.getTransports().join(',') : '');
      } else {
        set('credential_id', encode(cred.rawId));
        set('client_data_json', encode(r.clientDataJSON));
        set('authenticator_data', encode(r.authenticatorData));
        set('signature', encode(r.signature));
        set('user_handle', r.userHandle ? encode(r.userHandle) : '');
      }
      form.submit();
    };
    var failed = function (err) {
      busy = false;
      if (err && err.name === 'NotAllowedError') say(words('cancelled', 'The security key was not used (cancelled or timed out). Try again.'));
      else if (status && status.getAttribute('data-failed')) say(status.getAttribute('data-failed') + (err && err.name ? ' (' + err.name + ')' : ''));
      else say('The security key could not be used' + (err && err.name ? ' (' + err.name + ')' : '') + '. Try again.');
    };
    if (mode === 'create') {
      o.user.id = decode(o.user.id);
      o.excludeCredentials = descriptors(o.excludeCredentials);
      navigator.credentials.create({ publicKey: o }).then(done, failed);
    } else {
      o.allowCredentials = descriptors(o.allowCredentials);
      navigator.credentials.get({ publicKey: o }).then(done, failed);
    }
  });
})();
`;

export const SCRIPTS: ReadonlyMap<string, string> = new Map([
  [FORM_POST_SCRIPT_PATH, FORM_POST_SCRIPT],
  [STATUS_IFRAME_SCRIPT_PATH, STATUS_IFRAME_SCRIPT],
  [THIRD_PARTY_STEP1_SCRIPT_PATH, THIRD_PARTY_STEP1_SCRIPT],
  [THIRD_PARTY_STEP2_SCRIPT_PATH, THIRD_PARTY_STEP2_SCRIPT],
  [WEBAUTHN_SCRIPT_PATH, WEBAUTHN_SCRIPT],
]);
