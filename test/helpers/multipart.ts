// Multipart bodies for upload tests: built by the platform's FormData, returned as bytes with
// their Content-Type (boundary included), ready for t.call's rawBody.
export async function multipartBody(
  file: { name: string; content: string | Uint8Array; type?: string } | undefined,
  fields: Record<string, string> = {},
  fileField = 'file',
): Promise<{ rawBody: Uint8Array; headers: Record<string, string> }> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  if (file) form.append(fileField, new Blob([file.content as string | Uint8Array<ArrayBuffer>], { type: file.type ?? 'application/octet-stream' }), file.name);
  const request = new Request('http://localhost/', { method: 'POST', body: form });
  return { rawBody: new Uint8Array(await request.arrayBuffer()), headers: { 'Content-Type': request.headers.get('content-type')! } };
}
