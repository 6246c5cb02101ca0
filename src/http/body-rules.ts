// What areas declare about their endpoints whose bodies are not small JSON (Area.bodies): the
// media types they take and their limits. Read by requestBodies (body.ts).

/** Form posts from browsers and OAuth clients (SAML ACS, LTI messages, token endpoints). */
export const FORM_TYPE = /^application\/x-www-form-urlencoded\s*(?:;|$)/i;
/** File uploads, streamed to disk by src/http/upload.ts. */
export const MULTIPART_TYPE = /^multipart\/form-data\s*;/i;
/** What a multipart body carries beyond its file (boundaries, part headers, small fields): add it to a file limit. */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

/** The body rule of an upload endpoint whose file may be `maxFileBytes` long. */
export const uploadBody = (method: string, pattern: RegExp, maxFileBytes: number): BodyLimitRule => ({
  method,
  pattern,
  maxBytes: maxFileBytes + MULTIPART_OVERHEAD_BYTES,
  types: [MULTIPART_TYPE],
  streamed: true,
});

/**
 * The endpoints whose bodies differ from the default: larger limits (whole documents, uploads) or
 * another media type than JSON (forms, multipart). Areas declare their own (Area.bodies).
 */
export interface BodyLimitRule {
  method: string;
  pattern: RegExp;
  maxBytes: number;
  /** The media types accepted; JSON when left out. */
  types?: RegExp[];
  /**
   * The handler reads the body as a stream and stops at `maxBytes` itself (uploads: receiveUpload);
   * here only an announced length is judged, since the generic limit buffers what it counts.
   */
  streamed?: boolean;
}

