// The heavy parts of an import, run in the server's worker threads (src/lib/worker-pool.ts) so that
// the event loop keeps serving requests and live editors: `scan` reads the zip's directory and the
// manifest and plans the course; `convert` turns a batch of HTML pages into Markdown; `extract`
// copies a batch of files out of the zip into a staging directory, hashed; `states` builds new
// documents' Yjs states for the write. Each task opens the zip
// itself (structured clone cannot carry it) and is told how much earlier tasks inflated, so the
// package's limits hold across them. This module's default export is the threads' entry.
import { join } from 'node:path';
import type { ActivityType } from '../../db/schema';
import { encodeBody } from '../../collab/yjs-tasks';
import { convertHtml, type ConvertedPage } from './html';
import { cleanTitle, EXPORT_PLATFORM, placeholder } from './text';
import {
  readCanvasAssignment,
  readCanvasModules,
  readCcAssignment,
  readLtiLink,
  readManifest,
  readTopic,
  readWebLink,
  type ManifestResource,
  type OrgItem,
} from './manifest';
import { CartridgeRefused, SafeZip } from './zip';

export const MANIFEST = 'imsmanifest.xml';
const MANIFEST_MAX_BYTES = 16 * 1024 * 1024;
const DESCRIPTOR_MAX_BYTES = 4 * 1024 * 1024;
const PAGE_MAX_BYTES = 16 * 1024 * 1024;

export interface Skipped {
  identifier: string;
  type: string;
  reason: string;
}

export interface PlannedDocument {
  /** `page:<path>` for a page of the package, `inline:<identifier>` for text the scan converted. */
  key: string;
  title: string;
}

export interface PlannedActivity {
  identifier: string;
  title: string;
  type: ActivityType;
  deepLinkUrl?: string;
  document?: PlannedDocument;
  assignment?: { points: number; dueAt?: string };
  /** A basic LTI link's launch URL and custom parameters: an `lti` activity when a tool of the tenant has its host, else `external`. */
  lti?: PlannedLti;
  /** How the activity came about, for the report's counts. */
  source: 'page' | 'link' | 'lti' | 'discussion' | 'file' | 'assignment';
}

export interface PlannedLti {
  launchUrl: string;
  custom: Record<string, string>;
  /** The tool our own export named (extensions of platform EXPORT_PLATFORM), tried before the host. */
  toolId?: string;
}

/** The `platform` of the extensions our export writes into basic LTI links. */
const CUSTOM_NAME = /^[A-Za-z0-9_]{1,64}$/;
const CUSTOM_MAX = 50;
const CUSTOM_VALUE_MAX = 1000;

export interface PlannedModule {
  identifier: string;
  title: string;
  activities: PlannedActivity[];
}

export interface PlannedSection {
  identifier: string;
  title: string;
  modules: PlannedModule[];
}

export interface InlineDocument extends ConvertedPage {
  key: string;
}

export interface Plan {
  version: string;
  thin: boolean;
  title: string | null;
  /** The cartridge's description (LOM), for a new course. */
  description: string | null;
  /** Modules outside any section, then sections, each in the cartridge's order. */
  modules: PlannedModule[];
  sections: PlannedSection[];
  /** HTML pages to convert (paths in the package). */
  pages: string[];
  /** Texts the scan converted itself (discussion topics, CC assignments, links to files). */
  inline: InlineDocument[];
  /** Files to keep as course files (paths in the package). */
  files: string[];
  skipped: Skipped[];
  warnings: string[];
  inflated: number;
}

export type CheckTask = { kind: 'check'; zipPath: string };
export type ScanTask = { kind: 'scan'; zipPath: string };
export type ConvertTask = { kind: 'convert'; zipPath: string; alreadyInflated: number; pages: string[]; allPages: string[]; maxMarkdownBytes: number };
/** New documents' Yjs states (collab/yjs-tasks.ts encodeBody), built here rather than on the event loop. */
export type StatesTask = { kind: 'states'; bodies: Array<{ id: string; markdown: string }> };
export type ExtractTask = { kind: 'extract'; zipPath: string; alreadyInflated: number; files: string[]; stagingDir: string };

export interface ConvertResult {
  pages: Array<ConvertedPage & { path: string }>;
  tooLarge: string[];
  inflated: number;
}
export interface ExtractResult {
  files: Array<{ path: string; staged: string; bytes: number; sha256: string }>;
  inflated: number;
}

/** What a task answers when the package is refused: an error's class does not survive the trip back from a thread. */
export interface Refusal {
  refused: string;
}

export type ImportTask = CheckTask | ScanTask | ConvertTask | ExtractTask | StatesTask;

export interface StatesResult {
  states: Array<{ id: string; update: Uint8Array; stored: string }>;
}

export default async function run(task: ImportTask): Promise<Plan | ConvertResult | ExtractResult | CheckResult | StatesResult | Refusal> {
  try {
    if (task.kind === 'check') return await check(task.zipPath);
    if (task.kind === 'scan') return await scan(task.zipPath);
    if (task.kind === 'convert') return await convert(task);
    if (task.kind === 'states') return { states: task.bodies.map(({ id, markdown }) => ({ id, ...encodeBody(markdown) })) };
    return await extract(task);
  } catch (error) {
    if (error instanceof CartridgeRefused) return { refused: error.message };
    throw error;
  }
}

const isHtml = (path: string) => /\.x?html?$/i.test(path);

/** A resource type without its version: `imswl_xmlv1p1` → `imswl`. */
function family(type: string): string {
  const t = type.toLowerCase();
  if (t === 'webcontent') return 'webcontent';
  if (/^imswl_xmlv1p\d$/.test(t)) return 'weblink';
  if (/^imsdt_xmlv1p\d$/.test(t)) return 'discussion';
  if (/^imsbasiclti_xmlv1p\d$/.test(t)) return 'lti';
  if (/^assignment_xmlv1p\d$/.test(t)) return 'assignment';
  if (/imsqti|assessment|question-bank/.test(t)) return 'qti';
  if (/^associatedcontent\/imscc_xmlv1p\d\/learning-application-resource$/.test(t)) return 'associated';
  return 'unknown';
}

export interface CheckResult {
  version: string;
  entries: number;
}

/** What the upload can check at once: the zip's directory, and a manifest that is there, well-formed and of a known version. */
async function check(zipPath: string): Promise<CheckResult> {
  const zip = await SafeZip.open(zipPath);
  try {
    if (!zip.has(MANIFEST)) throw new CartridgeRefused('the package has no imsmanifest.xml at its root');
    const manifest = readManifest(await zip.read(MANIFEST, MANIFEST_MAX_BYTES));
    return { version: manifest.thin ? `${manifest.version} (thin)` : manifest.version, entries: zip.entries.size };
  } finally {
    zip.close();
  }
}

async function scan(zipPath: string): Promise<Plan> {
  const zip = await SafeZip.open(zipPath);
  try {
    if (!zip.has(MANIFEST)) throw new CartridgeRefused('the package has no imsmanifest.xml at its root');
    const manifest = readManifest(await zip.read(MANIFEST, MANIFEST_MAX_BYTES));
    const skipped: Skipped[] = [];
    const warnings: string[] = [];
    const pages = new Set<string>();
    const files = new Set<string>();
    const inline: InlineDocument[] = [];
    const descriptor = async (path: string) => zip.read(path, DESCRIPTOR_MAX_BYTES);
    // Canvas's extension: module names CC's items may lack, and the modules' order.
    const canvasModules = zip.has('course_settings/module_meta.xml') ? readCanvasModules(await descriptor('course_settings/module_meta.xml')) : new Map<string, { title?: string; position?: number }>();

    // Every file of a web-content resource is kept: HTML as pages (documents), the rest as course files.
    for (const resource of manifest.resources.values()) {
      const kind = family(resource.type);
      if (kind !== 'webcontent' && kind !== 'associated') continue;
      for (const path of resource.files) {
        if (!zip.has(path)) continue;
        if (isHtml(path)) pages.add(path);
        else if (!/\.xml$/i.test(path) || kind === 'webcontent') files.add(path);
      }
    }
    const kindOf = (path: string): 'page' | 'file' | undefined => (pages.has(path) ? 'page' : zip.has(path) ? 'file' : undefined);
    const textDocument = (key: string, title: string, html: string, basePath: string, isHtmlText: boolean): PlannedDocument => {
      const converted = isHtmlText ? convertHtml(html, basePath, kindOf) : { title: undefined, markdown: html.trim() ? `${html.trim()}\n` : '', scriptsRemoved: 0, handlersRemoved: 0, references: [] };
      for (const ref of converted.references) if (kindOf(ref) === 'file') files.add(ref);
      inline.push({ ...converted, key });
      return { key, title };
    };

    const activityOf = async (item: OrgItem, resource: ManifestResource): Promise<PlannedActivity | undefined> => {
      const kind = family(resource.type);
      const descriptorPath = resource.href ?? resource.files[0];
      const fallbackTitle = item.title || resource.identifier;
      switch (kind) {
        case 'webcontent': {
          const path = resource.href ?? resource.files[0];
          if (!path || !zip.has(path)) {
            skipped.push({ identifier: item.identifier, type: resource.type, reason: `its file ${path ?? '(none)'} is not in the package` });
            return undefined;
          }
          const title = cleanTitle(item.title, path.split('/').pop()!);
          if (isHtml(path)) return { identifier: item.identifier, title, type: 'reading', source: 'page', document: { key: `page:${path}`, title } };
          files.add(path);
          const key = `inline:${item.identifier}`;
          inline.push({ key, title, markdown: `[${title.replace(/[[\]\\]/g, '\\$&')}](${placeholder('file', path)})\n`, scriptsRemoved: 0, handlersRemoved: 0, references: [path] });
          return { identifier: item.identifier, title, type: 'reading', source: 'file', document: { key, title } };
        }
        case 'weblink': {
          if (!descriptorPath || !zip.has(descriptorPath)) break;
          const link = readWebLink(await descriptor(descriptorPath), descriptorPath);
          if (!link.url || !/^https?:\/\//i.test(link.url)) {
            skipped.push({ identifier: item.identifier, type: resource.type, reason: 'the web link has no http(s) URL' });
            return undefined;
          }
          return { identifier: item.identifier, title: cleanTitle(item.title || link.title, link.url), type: 'external', source: 'link', deepLinkUrl: link.url };
        }
        case 'lti': {
          if (!descriptorPath || !zip.has(descriptorPath)) break;
          const link = readLtiLink(await descriptor(descriptorPath), descriptorPath);
          if (!link.launchUrl || !/^https?:\/\//i.test(link.launchUrl)) {
            skipped.push({ identifier: item.identifier, type: resource.type, reason: 'the LTI link has no http(s) launch URL' });
            return undefined;
          }
          const title = cleanTitle(item.title || link.title, link.launchUrl);
          // Custom parameters as an lti activity keeps them: names of letters, digits and _, single-line values, at most 50.
          const custom: Record<string, string> = {};
          for (const [name, value] of link.custom) {
            const clean = value.replace(/[\u0000-\u001f\u007f]+/g, ' ');
            if (!CUSTOM_NAME.test(name) || clean.length > CUSTOM_VALUE_MAX || Object.keys(custom).length >= CUSTOM_MAX) {
              warnings.push(`LTI link ${item.identifier}: custom parameter "${name.slice(0, 64)}" was left out (a name of letters, digits and _, a value of at most ${CUSTOM_VALUE_MAX} characters, at most ${CUSTOM_MAX} of them)`);
              continue;
            }
            custom[name] = clean;
          }
          const ours = link.extensions.find((e) => e.platform === EXPORT_PLATFORM)?.properties.get('tool_id');
          return { identifier: item.identifier, title, type: 'external', source: 'lti', deepLinkUrl: link.launchUrl, lti: { launchUrl: link.launchUrl, custom, ...(ours ? { toolId: ours } : {}) } };
        }
        case 'discussion': {
          if (!descriptorPath || !zip.has(descriptorPath)) break;
          const topic = readTopic(await descriptor(descriptorPath), descriptorPath);
          const title = cleanTitle(item.title || topic.title, fallbackTitle);
          const document = textDocument(`inline:${resource.identifier}`, title, topic.text, descriptorPath, topic.html);
          return { identifier: item.identifier, title, type: 'discussion', source: 'discussion', document };
        }
        case 'assignment': {
          if (!descriptorPath || !zip.has(descriptorPath)) break;
          const assignment = readCcAssignment(await descriptor(descriptorPath), descriptorPath);
          // Canvas adds its assignment_settings.xml (points, due date) to the resource or to one it depends on.
          const settingsPath = [resource, ...resource.dependencies.map((id) => manifest.resources.get(id))]
            .flatMap((r) => r?.files ?? [])
            .find((f) => /(^|\/)assignment_settings\.xml$/.test(f) && zip.has(f));
          const canvas = settingsPath ? readCanvasAssignment(await descriptor(settingsPath), settingsPath) : undefined;
          const points = assignment.points ?? canvas?.points;
          const title = cleanTitle(item.title || assignment.title || canvas?.title, fallbackTitle);
          const document = textDocument(`inline:${resource.identifier}`, title, assignment.text, descriptorPath, true);
          return {
            identifier: item.identifier,
            title,
            type: 'assignment',
            source: 'assignment',
            document,
            ...(points ? { assignment: { points, ...(canvas?.dueAt ? { dueAt: canvas.dueAt } : {}) } } : {}),
          };
        }
        case 'associated': {
          // Canvas writes its assignments so: an HTML page of instructions and assignment_settings.xml.
          const settings = resource.files.find((f) => /(^|\/)assignment_settings\.xml$/.test(f) && zip.has(f));
          const page = resource.files.find((f) => isHtml(f) && zip.has(f));
          if (!settings) {
            skipped.push({ identifier: item.identifier, type: resource.type, reason: 'associated content without a Canvas assignment is not imported' });
            return undefined;
          }
          const canvas = readCanvasAssignment(await descriptor(settings), settings);
          const title = cleanTitle(item.title || canvas.title, fallbackTitle);
          return {
            identifier: item.identifier,
            title,
            type: 'assignment',
            source: 'assignment',
            ...(page ? { document: { key: `page:${page}`, title } } : {}),
            ...(canvas.points ? { assignment: { points: canvas.points, ...(canvas.dueAt ? { dueAt: canvas.dueAt } : {}) } } : {}),
          };
        }
        case 'qti':
          skipped.push({ identifier: item.identifier, type: resource.type, reason: 'QTI assessments are not imported' });
          return undefined;
        default:
          skipped.push({ identifier: item.identifier, type: resource.type || '(none)', reason: 'this resource type is not imported' });
          return undefined;
      }
      skipped.push({ identifier: item.identifier, type: resource.type, reason: `its descriptor ${descriptorPath ?? '(none)'} is not in the package` });
      return undefined;
    };

    /** The leaves under an item, depth first (nesting below a module is flattened into it). */
    const leavesOf = async (items: OrgItem[], into: PlannedActivity[]): Promise<void> => {
      for (const item of items) {
        if (item.children.length > 0) {
          await leavesOf(item.children, into);
          continue;
        }
        if (!item.identifierref) continue; // a heading with no content
        const resource = manifest.resources.get(item.identifierref);
        if (!resource) {
          skipped.push({ identifier: item.identifier, type: '(missing)', reason: `it refers to resource ${item.identifierref}, which the manifest lacks` });
          continue;
        }
        const activity = await activityOf(item, resource);
        if (!activity) continue;
        if (resource.instructorOnly) {
          warnings.push(`${item.identifier} ("${activity.title}") is for instructors only in the cartridge (Moodle exports a hidden activity so); activities here have no such setting, so it was imported visible to the course's students`);
        }
        into.push(activity);
      }
    };
    const titleOf = (item: OrgItem, fallback: string) => cleanTitle(item.title || canvasModules.get(item.identifier)?.title, fallback);
    // Moodle writes an indented activity inside items with neither title nor resource, one per
    // level of indentation: a layout of its pages, not a module. Below the top level, such an item
    // (that Canvas does not name either) gives way to its children.
    const unwrap = (items: OrgItem[]): OrgItem[] =>
      items.flatMap((item) =>
        !item.title && !item.identifierref && item.children.length > 0 && !canvasModules.get(item.identifier)?.title ? unwrap(item.children) : [{ ...item, children: unwrap(item.children) }],
      );
    const topItems = manifest.items.map((item) => ({ ...item, children: unwrap(item.children) }));

    const modules: PlannedModule[] = [];
    const sections: PlannedSection[] = [];
    let loose: PlannedModule | undefined;
    for (const item of topItems) {
      if (item.children.length === 0 && item.identifierref) {
        // Content at the top level goes to a module of its own, as in Canvas's "unfiled" items.
        if (!loose) modules.push((loose = { identifier: `${item.identifier}#module`, title: cleanTitle(manifest.title ?? undefined, 'General'), activities: [] }));
        await leavesOf([item], loose.activities);
        continue;
      }
      const hasContainers = item.children.some((child) => child.children.length > 0);
      const emptySection = item.children.length === 0 && /^sec_/.test(item.identifier);
      if (hasContainers || emptySection) {
        const section: PlannedSection = { identifier: item.identifier, title: titleOf(item, 'Section'), modules: [] };
        let own: PlannedModule | undefined;
        for (const child of item.children) {
          if (child.children.length > 0 || (child.children.length === 0 && !child.identifierref && /^mod_/.test(child.identifier))) {
            const module: PlannedModule = { identifier: child.identifier, title: titleOf(child, 'Module'), activities: [] };
            await leavesOf(child.children, module.activities);
            section.modules.push(module);
          } else if (child.identifierref) {
            if (!own) section.modules.push((own = { identifier: `${item.identifier}#module`, title: section.title, activities: [] }));
            await leavesOf([child], own.activities);
          }
        }
        sections.push(section);
      } else {
        const module: PlannedModule = { identifier: item.identifier, title: titleOf(item, 'Module'), activities: [] };
        await leavesOf(item.children, module.activities);
        modules.push(module);
      }
    }
    // Canvas's order of modules, where module_meta.xml gives one (the others keep theirs, after them).
    const positionOf = (module: PlannedModule) => canvasModules.get(module.identifier)?.position ?? Number.POSITIVE_INFINITY;
    if (modules.some((m) => canvasModules.get(m.identifier)?.position !== undefined)) modules.sort((a, b) => (positionOf(a) === positionOf(b) ? 0 : positionOf(a) < positionOf(b) ? -1 : 1));
    // Every page becomes a document (the ones no activity shows are linked to the course), and
    // the files that texts link to are kept even when no resource lists them.
    for (const doc of inline) for (const ref of doc.references) if (kindOf(ref) === 'file') files.add(ref);
    return {
      version: manifest.version,
      thin: manifest.thin,
      title: manifest.title,
      // Moodle writes the course summary as HTML.
      description: manifest.description ? convertHtml(manifest.description, '', () => undefined).markdown.trim().slice(0, 20_000) || null : null,
      modules,
      sections,
      pages: [...pages],
      inline,
      files: [...files].filter((path) => !pages.has(path) && path !== MANIFEST),
      skipped,
      warnings,
      inflated: zip.inflatedBytes,
    };
  } finally {
    zip.close();
  }
}

async function convert(task: ConvertTask): Promise<ConvertResult> {
  const zip = await SafeZip.open(task.zipPath, { alreadyInflated: task.alreadyInflated });
  try {
    const allPages = new Set(task.allPages);
    const kindOf = (path: string): 'page' | 'file' | undefined => (allPages.has(path) ? 'page' : zip.has(path) && path !== MANIFEST ? 'file' : undefined);
    const pages: ConvertResult['pages'] = [];
    const tooLarge: string[] = [];
    for (const path of task.pages) {
      const html = (await zip.read(path, PAGE_MAX_BYTES)).toString('utf8');
      const converted = convertHtml(html, path, kindOf);
      if (Buffer.byteLength(converted.markdown) > task.maxMarkdownBytes) tooLarge.push(path);
      else pages.push({ ...converted, path });
    }
    return { pages, tooLarge, inflated: zip.inflatedBytes };
  } finally {
    zip.close();
  }
}

async function extract(task: ExtractTask): Promise<ExtractResult> {
  const zip = await SafeZip.open(task.zipPath, { alreadyInflated: task.alreadyInflated });
  try {
    const files: ExtractResult['files'] = [];
    for (const [index, path] of task.files.entries()) {
      const staged = join(task.stagingDir, `${Date.now().toString(36)}-${index}-${Math.random().toString(36).slice(2)}`);
      const { bytes, sha256 } = await zip.extract(path, staged);
      files.push({ path, staged, bytes, sha256 });
    }
    return { files, inflated: zip.inflatedBytes };
  } finally {
    zip.close();
  }
}

