/**
 * What a User-Agent header says about the browser and the device, as Keycloak's account console shows a
 * session's device (its DeviceRepresentation: os, osVersion, device, browser "name/version", mobile). A
 * small reading of the common browsers and systems, not a full parser: anything else is "Other", as
 * Keycloak's own fallback names it.
 */
export interface DeviceDescription {
  /** "Firefox/128.0", "Chrome/120.0.6099"...; "Other" when not recognised. */
  browser: string;
  os: string;
  /** "Unknown" when not told (Keycloak's DeviceRepresentation.UNKNOWN). */
  osVersion: string;
  /** "iPhone", "iPad", "Mobile" (another phone), or "Other". */
  device: string;
  mobile: boolean;
}

const UNKNOWN_DEVICE: DeviceDescription = Object.freeze({ browser: 'Other', os: 'Other', osVersion: 'Unknown', device: 'Other', mobile: false });

// In order: Edge and Opera name Chrome too, Chrome names Safari too.
const BROWSERS: ReadonlyArray<[string, RegExp]> = [
  ['Edge', /\bEdg(?:e|A|iOS)?\/([\d.]+)/],
  ['Opera', /\bOPR\/([\d.]+)/],
  ['Samsung Internet', /\bSamsungBrowser\/([\d.]+)/],
  ['Firefox', /\b(?:Firefox|FxiOS)\/([\d.]+)/],
  ['Chrome', /\b(?:HeadlessChrome|Chrome|CriOS)\/([\d.]+)/],
  ['Safari', /\bVersion\/([\d.]+).*\bSafari\//],
  ['curl', /^curl\/([\d.]+)/],
];

const OSES: ReadonlyArray<[string, RegExp, (v: string) => string]> = [
  ['Windows', /\bWindows NT ([\d.]+)/, (v) => ({ '10.0': '10', '6.3': '8.1', '6.2': '8', '6.1': '7' })[v] ?? v],
  ['iOS', /\b(?:iPhone|CPU) OS ([\d_]+)/, (v) => v.replace(/_/g, '.')],
  ['Mac OS X', /\bMac OS X ([\d_.]+)/, (v) => v.replace(/_/g, '.')],
  ['Android', /\bAndroid ([\d.]+)/, (v) => v],
  ['Chrome OS', /\bCrOS \S+ ([\d.]+)/, (v) => v],
];

/** Keeps the first three parts of a version ("120.0.6099.109" → "120.0.6099"). */
const shortVersion = (v: string): string => v.split('.').slice(0, 3).join('.');

export function describeUserAgent(ua: string | undefined): DeviceDescription {
  if (!ua) return UNKNOWN_DEVICE;
  const browser = BROWSERS.map(([name, re]) => [name, re.exec(ua)?.[1]] as const).find(([, v]) => v !== undefined);
  let os = 'Other';
  let osVersion = 'Unknown';
  for (const [name, re, version] of OSES) {
    const m = re.exec(ua);
    if (m) {
      os = name;
      osVersion = version(m[1]!);
      break;
    }
  }
  if (os === 'Other' && /\bLinux\b/.test(ua)) os = 'Linux';
  const device = /\biPhone\b/.test(ua) ? 'iPhone' : /\biPad\b/.test(ua) ? 'iPad' : /\bMobile\b/.test(ua) && os === 'Android' ? 'Mobile' : 'Other';
  return { browser: browser ? `${browser[0]}/${shortVersion(browser[1]!)}` : 'Other', os, osVersion, device, mobile: device !== 'Other' };
}

/** A short line for pages, in no language: "Firefox 128 (Linux)". */
export function deviceLine(ua: string | undefined): string | undefined {
  if (!ua) return undefined;
  const d = describeUserAgent(ua);
  const [name, version] = d.browser.split('/');
  const browser = name === 'Other' ? undefined : `${name}${version ? ` ${version.split('.')[0]}` : ''}`;
  const os = d.os === 'Other' ? undefined : d.osVersion !== 'Unknown' ? `${d.os} ${d.osVersion}` : d.os;
  return browser && os ? `${browser} (${os})` : (browser ?? os);
}
