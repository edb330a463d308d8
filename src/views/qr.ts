import { html, type SafeHtml } from './html.js';

/**
 * A QR code as inline SVG (one path of dark modules on a light square, a quiet zone of four modules), for
 * an authenticator app to scan. uqr encodes it; it is loaded at the first setup page, not at start.
 */
export async function qrSvg(text: string, label: string): Promise<SafeHtml> {
  const { encode } = await import('uqr');
  const qr = encode(text, { ecc: 'M', border: 4 });
  let d = '';
  qr.data.forEach((row, y) => row.forEach((dark, x) => {
    if (dark) d += `M${x} ${y}h1v1h-1z`;
  }));
  return html`<svg class="qr" role="img" aria-label="${label}" viewBox="0 0 ${qr.size} ${qr.size}" width="${qr.size * 6}" height="${qr.size * 6}" shape-rendering="crispEdges" xmlns="http://www.w3.org/2000/svg"><rect width="${qr.size}" height="${qr.size}" fill="#fff"/><path d="${d}" fill="#000"/></svg>`;
}
