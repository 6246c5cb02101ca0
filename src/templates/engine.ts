// The template engine: mustache 4.2, logic-less. A body may hold `{{name}}` placeholders,
// `{{#name}}…{{/name}}` / `{{^name}}…{{/name}}` sections and `{{! comments }}`, every name a
// declared variable. Refused (422): unescaped output (`{{{name}}}`, `{{& name}}`), partials
// (`{{> name}}`), delimiter changes, the implicit iterator, dotted names, and sections nested more
// than MAX_SECTION_DEPTH deep (Mustache renders sections recursively). Values are strings,
// numbers or booleans only, so a view never holds a function: nothing a template says can run code.
import Mustache from 'mustache';
import type { TemplateVariable } from '../../db/schema';
import { markdownToHtml, escapeHtml } from '../../export/markdown';
import { unprocessable, type FieldError } from '../http/errors';

/** How deep sections may nest: deeper bodies are refused (422) when written, and when rendered if stored before. */
export const MAX_SECTION_DEPTH = 64;

type Token = [string, string, number, number, Token[]?, ...unknown[]];

const refusedTypes: Record<string, string> = {
  '&': 'unescaped output ({{{ }}} or {{& }}) is not allowed',
  '>': 'partials ({{> }}) are not allowed',
  '=': 'changing the delimiters ({{= =}}) is not allowed',
};

/** The problems of a body against its declared variables; none for a body that renders. */
export function bodyProblems(body: string, variables: readonly TemplateVariable[]): FieldError[] {
  let tokens: Token[];
  try {
    tokens = Mustache.parse(body) as unknown as Token[];
  } catch (err) {
    return [{ path: 'body', message: `template syntax: ${(err as Error).message}` }];
  }
  const declared = new Set(variables.map((v) => v.name));
  const problems: FieldError[] = [];
  // Iterative, in document order: a body nested thousands deep must not overflow the stack here.
  const stack: { list: Token[]; next: number; depth: number }[] = [{ list: tokens, next: 0, depth: 0 }];
  let tooDeep = false;
  while (stack.length > 0) {
    const frame = stack.at(-1)!;
    if (frame.next >= frame.list.length) {
      stack.pop();
      continue;
    }
    const [type, value, start, , children] = frame.list[frame.next++]!;
    if (type === 'text' || type === '!') continue;
    const at = `at character ${start}`;
    if (refusedTypes[type]) problems.push({ path: 'body', message: `${refusedTypes[type]} (${at})` });
    else if (!declared.has(value)) {
      problems.push({ path: 'body', message: `the placeholder "${value}" ${at} is not a declared variable` });
    }
    if ((type === '#' || type === '^') && children) {
      if (frame.depth < MAX_SECTION_DEPTH) stack.push({ list: children, next: 0, depth: frame.depth + 1 });
      else if (!tooDeep) {
        tooDeep = true;
        problems.push({ path: 'body', message: `sections are nested more than ${MAX_SECTION_DEPTH} deep (${at})` });
      }
    }
  }
  return problems;
}

/** 422 naming every problem of the body. */
export function checkBody(body: string, variables: readonly TemplateVariable[]): void {
  const problems = bodyProblems(body, variables);
  if (problems.length > 0) throw unprocessable(problems.map((p) => p.message).join('; '), problems);
}

export type VariableValue = string | number | boolean;

/**
 * The view a body renders with: every declared variable, with the value given, else its default,
 * else empty. Unknown variables and missing required ones are one 422 naming each of them.
 */
function viewOf(variables: readonly TemplateVariable[], values: Record<string, VariableValue>): Record<string, VariableValue> {
  const declared = new Map(variables.map((v) => [v.name, v]));
  const errors: FieldError[] = [];
  for (const name of Object.keys(values)) {
    if (!declared.has(name)) errors.push({ path: `variables.${name}`, message: `"${name}" is not a variable of this template` });
  }
  // No prototype: a name such as "constructor" finds the value given, never an inherited function.
  const view: Record<string, VariableValue> = Object.create(null);
  for (const v of variables) {
    const given = Object.hasOwn(values, v.name) ? values[v.name] : undefined;
    const value = given ?? v.default ?? undefined;
    if (value === undefined || (v.required && value === '')) {
      if (v.required) errors.push({ path: `variables.${v.name}`, message: `"${v.name}" is required` });
      view[v.name] = '';
    } else view[v.name] = value;
  }
  if (errors.length > 0) throw unprocessable(errors.map((e) => e.message).join('; '), errors);
  return view;
}

const verbatim = (value: unknown) => String(value);

/**
 * `content`: the Markdown with the values as given. `html`: the same rendered with every value
 * HTML-escaped, then through markdown-it with raw HTML disabled, so a `<script>` in a value is text.
 */
export function renderTemplate(
  template: { body: string; variables: readonly TemplateVariable[] },
  values: Record<string, VariableValue>,
): { content: string; html: string } {
  // Written bodies were checked; one stored before the depth limit could overflow Mustache's renderer.
  checkBody(template.body, template.variables);
  const view = viewOf(template.variables, values);
  const content = Mustache.render(template.body, view, undefined, { escape: verbatim });
  const escaped = Mustache.render(template.body, view, undefined, { escape: (value: unknown) => escapeHtml(String(value)) });
  return { content, html: markdownToHtml(escaped) };
}
