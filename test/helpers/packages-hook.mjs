// Module hook for test/helpers/packages-child.ts: appends the package of every module resolved
// under node_modules to a file, before the import that asked for it goes on.
import { appendFileSync } from 'node:fs';

let file;
export function initialize(data) {
  file = data.file;
}

export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  const name = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(resolved.url)?.[1];
  if (name) appendFileSync(file, `${name}\n`);
  return resolved;
}
