// Mail: the templates of the mails the server sends (templates.ts) and the durable outbox that
// sends them over SMTP with nodemailer (outbox.ts, a `mail.send` kind of the job runner). Areas
// build a message and call enqueueMail() inside their transaction; nothing is sent before it commits.
import type { Area } from '../context';
import { newRouter } from '../http/openapi';
import { MAIL_SEND, mailSendJob } from './outbox';

export const mailArea: Area = { router: newRouter(), scope: 'none', jobs: (deps) => ({ [MAIL_SEND]: mailSendJob(deps) }) };
