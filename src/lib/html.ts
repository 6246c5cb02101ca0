// Text into HTML: the five characters that could open markup or end an attribute, escaped.
const htmlEscapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (ch) => htmlEscapes[ch]!);
