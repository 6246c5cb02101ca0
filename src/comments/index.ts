// Comments: threads on documents, anchored by Yjs relative positions that follow edits; rights
// from the caller's role on the document (documents policy).
import type { Area } from '../context';
import { commentsRouter } from './routes';

export const commentsArea: Area = { router: commentsRouter, scope: { name: 'comments', description: 'comment threads on documents' } };
