// Content-Disposition for a download (RFC 6266): an ASCII `filename` every client understands, and
// `filename*` (RFC 8187, UTF-8) with the title as written when it is not plain ASCII.

/** Characters no file system or header takes well: path separators, controls, quotes, reserved. */
const unsafe = /[\u0000-\u001f\u007f<>:"/\\|?*\u2028\u2029]/g;

function baseName(title: string): string {
  // Leading dots would hide the file or climb a directory; trailing ones Windows drops.
  const cleaned = title.replace(unsafe, ' ').replace(/\s+/g, ' ').replace(/^[\s.]+/, '').slice(0, 120).replace(/[\s.]+$/, '');
  return cleaned || 'document';
}

/** `attachment; filename="…"` (ASCII), plus `filename*=UTF-8''…` when the title needs it. */
export function contentDisposition(title: string, extension: string): string {
  const name = `${baseName(title)}.${extension}`;
  const ascii = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7e]/g, '_')
    .replace(/[%;]/g, '_');
  // A title with no ASCII letter or digit at all falls back to a generic name.
  const fallback = /[A-Za-z0-9]/.test(ascii.slice(0, -extension.length - 1)) ? ascii : `document.${extension}`;
  if (fallback === name) return `attachment; filename="${name}"`;
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
