// zod schemas of the comments API.
import { z } from '@hono/zod-openapi';
import { timestamp, uuid } from '../http/openapi';
import { multiLineText } from '../http/text';

export const MAX_COMMENT_LENGTH = 10_000;

const body = multiLineText()
  .trim()
  .min(1, 'body must not be empty')
  .max(MAX_COMMENT_LENGTH, `body must be at most ${MAX_COMMENT_LENGTH} characters`);

const position = z.string().max(400).openapi({ description: 'base64 of Y.encodeRelativePosition on the Y.Text `content`' });

export const anchorInput = z
  .object({ start: position, end: position })
  .strict()
  .openapi('CommentAnchorInput', {
    description:
      'Where a thread is anchored: Yjs relative positions of the first anchored character and of the end, each ' +
      'base64 of `Y.encodeRelativePosition(Y.createRelativePositionFromTypeIndex(doc.getText("content"), index))`.',
  });

export const createCommentBody = z
  .object({
    body,
    parent_id: uuid().optional().openapi({ description: 'The comment answered: a reply joins its thread' }),
    anchor: anchorInput.optional(),
  })
  .strict()
  .openapi('CreateComment');

export const updateCommentBody = z.object({ body }).strict().openapi('UpdateComment');

export const anchorSchema = z
  .object({
    start: z.string(),
    end: z.string(),
    text: z.string().nullable().openapi({ description: 'The anchored text as the document has it now; null once deleted' }),
    orphaned: z.boolean().openapi({ description: 'The anchored text was deleted' }),
  })
  .openapi('CommentAnchor');

export const commentSchema = z
  .object({
    id: uuid(),
    document_id: uuid(),
    thread_id: uuid().openapi({ description: "The thread's root comment (a root names itself)" }),
    parent_id: uuid().nullable(),
    author_id: uuid(),
    body: z.string().nullable().openapi({ description: 'Null when deleted (a deleted root with replies stays in its thread)' }),
    deleted: z.boolean(),
    anchor: anchorSchema.nullable().openapi({ description: 'On an anchored root; null on replies' }),
    resolved: z.boolean().openapi({ description: "The thread's state (kept on its root)" }),
    resolved_at: timestamp.nullable(),
    resolved_by: uuid().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('Comment');

export const threadSchema = commentSchema.extend({ replies: z.array(commentSchema) }).openapi('CommentThread');
