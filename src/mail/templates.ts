// The mails the server sends, each with a text and an HTML part. Every one names the tenant it
// comes from and says what to do when the reader did not ask for it. Whatever comes from people
// (names, the tenant's name, addresses) is escaped in the HTML part; the link is ours.
import { escapeHtml } from '../lib/html';

export interface MailContent {
  subject: string;
  text: string;
  html: string;
}

/** `2026-01-08 09:30 UTC`: a reader's mail client shows no time zone of ours, so say it. */
const readableTime = (at: Date): string => `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/** Part of a paragraph: text as given, or text shown in bold in the HTML part. */
type Run = string | { strong: string };
type Paragraph = Run[];

/** One mail: paragraphs before the link, the link and its button's label, paragraphs after it, and the signature. */
interface MailParts {
  subject: string;
  before: Paragraph[];
  link: string;
  linkLabel: string;
  after: Paragraph[];
  signature: string;
}

const plain = (p: Paragraph) => p.map((r) => (typeof r === 'string' ? r : r.strong)).join('');
const marked = (p: Paragraph) => p.map((r) => (typeof r === 'string' ? escapeHtml(r) : `<strong>${escapeHtml(r.strong)}</strong>`)).join('');

/** The text part: the link on a line of its own, after the paragraphs that lead to it. */
function textPart(m: MailParts): string {
  const lead = m.before.map(plain);
  const last = lead.pop() ?? '';
  return [...lead.flatMap((p) => [p, '']), `${last.replace(/\.$/, '')}:`, '', m.link, '', ...m.after.flatMap((p) => [plain(p), '']), `-- ${m.signature}`, ''].join('\n');
}

/** A short HTML page with the paragraphs and one button to the link. */
function htmlPart(m: MailParts): string {
  const paragraph = (p: string) => `<p style="margin:0 0 16px">${p}</p>`;
  const href = escapeHtml(m.link);
  return [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(m.subject)}</title></head>`,
    '<body style="margin:0;padding:24px;font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;font-size:16px;line-height:1.5;color:#1f2328">',
    '<div style="max-width:560px;margin:0 auto">',
    ...m.before.map((p) => paragraph(marked(p))),
    `<p style="margin:24px 0"><a href="${href}" style="display:inline-block;padding:12px 20px;background:#0b57d0;color:#ffffff;text-decoration:none;border-radius:6px">${escapeHtml(m.linkLabel)}</a></p>`,
    paragraph(`If the button does not work, copy this address into your browser:<br><a href="${href}" style="word-break:break-all">${href}</a>`),
    ...m.after.map((p) => paragraph(marked(p))),
    paragraph(`&mdash; ${escapeHtml(m.signature)}`),
    '</div></body></html>',
  ].join('\n');
}

const mail = (m: MailParts): MailContent => ({ subject: m.subject, text: textPart(m), html: htmlPart(m) });

export interface InvitationMail {
  tenantName: string;
  recipientName: string;
  recipientEmail: string;
  /** The admin who invited them, when one did. */
  inviterName?: string;
  link: string;
  expiresAt: Date;
}

export function invitationMail(m: InvitationMail): MailContent {
  const who = m.inviterName ? `${m.inviterName} invited you` : 'You are invited';
  return mail({
    subject: `You are invited to ${m.tenantName}`,
    before: [
      [`Hello ${m.recipientName},`],
      [`${who} to join `, { strong: m.tenantName }, ` with the address ${m.recipientEmail}.`],
      [`To accept, open this link and choose your password. It works once, until ${readableTime(m.expiresAt)}.`],
    ],
    link: m.link,
    linkLabel: 'Accept the invitation',
    after: [
      [
        'If you did not expect this invitation, ignore this mail: nothing happens unless the link is used, and it stops working by itself. ' +
          `If you keep receiving it, tell the administrators of ${m.tenantName}.`,
      ],
    ],
    signature: m.tenantName,
  });
}

export interface PasswordResetMail {
  tenantName: string;
  recipientName: string;
  recipientEmail: string;
  link: string;
  expiresAt: Date;
}

export function passwordResetMail(m: PasswordResetMail): MailContent {
  return mail({
    subject: `Reset your password for ${m.tenantName}`,
    before: [
      [`Hello ${m.recipientName},`],
      [`Someone asked to reset the password of your account ${m.recipientEmail} at `, { strong: m.tenantName }, '.'],
      [`To choose a new password, open this link. It works once, until ${readableTime(m.expiresAt)}.`],
    ],
    link: m.link,
    linkLabel: 'Choose a new password',
    after: [
      ['Setting a new password signs you out on every device.'],
      [
        'If you did not ask for this, ignore this mail: your password stays as it is and the link expires by itself. ' +
          `If you keep receiving such mails, tell the administrators of ${m.tenantName}.`,
      ],
    ],
    signature: m.tenantName,
  });
}
