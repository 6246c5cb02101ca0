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

/** A short HTML page with paragraphs (already escaped) and one button to the link. */
function htmlPage(title: string, before: string[], link: string, linkLabel: string, after: string[]): string {
  const paragraph = (p: string) => `<p style="margin:0 0 16px">${p}</p>`;
  const href = escapeHtml(link);
  return [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)}</title></head>`,
    '<body style="margin:0;padding:24px;font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;font-size:16px;line-height:1.5;color:#1f2328">',
    '<div style="max-width:560px;margin:0 auto">',
    ...before.map(paragraph),
    `<p style="margin:24px 0"><a href="${href}" style="display:inline-block;padding:12px 20px;background:#0b57d0;color:#ffffff;text-decoration:none;border-radius:6px">${escapeHtml(linkLabel)}</a></p>`,
    paragraph(`If the button does not work, copy this address into your browser:<br><a href="${href}" style="word-break:break-all">${href}</a>`),
    ...after.map(paragraph),
    '</div></body></html>',
  ].join('\n');
}

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
  const subject = `You are invited to ${m.tenantName}`;
  const who = m.inviterName ? `${m.inviterName} invited you` : 'You are invited';
  const text = [
    `Hello ${m.recipientName},`,
    '',
    `${who} to join ${m.tenantName} with the address ${m.recipientEmail}.`,
    `To accept, open this link and choose your password. It works once, until ${readableTime(m.expiresAt)}:`,
    '',
    m.link,
    '',
    'If you did not expect this invitation, ignore this mail: nothing happens unless the link is used,',
    `and it stops working by itself. If you keep receiving it, tell the administrators of ${m.tenantName}.`,
    '',
    `-- ${m.tenantName}`,
    '',
  ].join('\n');
  const e = escapeHtml;
  const html = htmlPage(
    subject,
    [
      `Hello ${e(m.recipientName)},`,
      `${e(who)} to join <strong>${e(m.tenantName)}</strong> with the address ${e(m.recipientEmail)}.`,
      `To accept, open this link and choose your password. It works once, until ${e(readableTime(m.expiresAt))}.`,
    ],
    m.link,
    'Accept the invitation',
    [
      `If you did not expect this invitation, ignore this mail: nothing happens unless the link is used, and it stops working by itself. If you keep receiving it, tell the administrators of ${e(m.tenantName)}.`,
      `&mdash; ${e(m.tenantName)}`,
    ],
  );
  return { subject, text, html };
}

export interface PasswordResetMail {
  tenantName: string;
  recipientName: string;
  recipientEmail: string;
  link: string;
  expiresAt: Date;
}

export function passwordResetMail(m: PasswordResetMail): MailContent {
  const subject = `Reset your password for ${m.tenantName}`;
  const text = [
    `Hello ${m.recipientName},`,
    '',
    `Someone asked to reset the password of your account ${m.recipientEmail} at ${m.tenantName}.`,
    `To choose a new password, open this link. It works once, until ${readableTime(m.expiresAt)}:`,
    '',
    m.link,
    '',
    'Setting a new password signs you out on every device.',
    '',
    'If you did not ask for this, ignore this mail: your password stays as it is and the link expires by itself.',
    `If you keep receiving such mails, tell the administrators of ${m.tenantName}.`,
    '',
    `-- ${m.tenantName}`,
    '',
  ].join('\n');
  const e = escapeHtml;
  const html = htmlPage(
    subject,
    [
      `Hello ${e(m.recipientName)},`,
      `Someone asked to reset the password of your account ${e(m.recipientEmail)} at <strong>${e(m.tenantName)}</strong>.`,
      `To choose a new password, open this link. It works once, until ${e(readableTime(m.expiresAt))}.`,
    ],
    m.link,
    'Choose a new password',
    [
      'Setting a new password signs you out on every device.',
      `If you did not ask for this, ignore this mail: your password stays as it is and the link expires by itself. If you keep receiving such mails, tell the administrators of ${e(m.tenantName)}.`,
      `&mdash; ${e(m.tenantName)}`,
    ],
  );
  return { subject, text, html };
}
