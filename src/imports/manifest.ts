// imsmanifest.xml and the small XML descriptors of a cartridge (web links, discussion topics, basic
// LTI links, Canvas's assignment settings and module metadata), read with fast-xml-parser with
// entities off: any DOCTYPE or ENTITY declaration is refused before parsing, so neither external
// entities (XXE) nor entity expansion (billion laughs) can happen. Pure: runs in the worker threads.
import { XMLParser } from 'fast-xml-parser';
import { CartridgeRefused } from './zip';

export type CartridgeVersion = '1.0' | '1.1' | '1.2' | '1.3';

export interface OrgItem {
  identifier: string;
  title: string;
  identifierref?: string;
  children: OrgItem[];
}

export interface ManifestResource {
  identifier: string;
  type: string;
  /** The launchable file, resolved to a path in the package. */
  href?: string;
  /** Every file of the resource, resolved to paths in the package. */
  files: string[];
  dependencies: string[];
  /** The resource's LOM metadata says its intended end user is the instructor (Moodle exports a hidden activity so). */
  instructorOnly: boolean;
}

export interface Manifest {
  version: CartridgeVersion;
  thin: boolean;
  title: string | null;
  /** The LOM general description (Moodle writes the course summary there). */
  description: string | null;
  /** The organization's top level (the children of its single root item). */
  items: OrgItem[];
  resources: Map<string, ManifestResource>;
}

const ARRAYS = new Set(['item', 'resource', 'file', 'dependency', 'organization', 'module', 'string', 'property', 'extensions']);

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  removeNSPrefix: true,
  processEntities: false,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  textNodeName: '#text',
  isArray: (name) => ARRAYS.has(name),
});

const NAMED_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** The five predefined XML entities and character references (the only ones XML without a DTD has). */
export function decodeXmlText(value: string): string {
  return value.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos);/g, (whole, name: string) => {
    if (name[0] !== '#') return NAMED_ENTITIES[name] ?? whole;
    const code = name[1] === 'x' ? Number.parseInt(name.slice(2), 16) : Number.parseInt(name.slice(1), 10);
    return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

type Node = Record<string, unknown>;

/** Parses XML from a cartridge; refuses a DOCTYPE or entity declaration, and malformed XML. */
export function parseCartridgeXml(bytes: Buffer | string, what: string): Node {
  let text = typeof bytes === 'string' ? bytes : bytes.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (/<!DOCTYPE/i.test(text)) throw new CartridgeRefused(`${what} has a DOCTYPE (refused: it could declare entities)`);
  if (/<!ENTITY/i.test(text)) throw new CartridgeRefused(`${what} declares entities (refused)`);
  try {
    return parser.parse(text, true) as Node;
  } catch (error) {
    throw new CartridgeRefused(`${what} is not well-formed XML (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`);
  }
}

/** An element's text: a string, or the `#text` of one with attributes, or the first of a repeated one. */
export function textOf(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) return textOf(value[0]);
  if (typeof value === 'string') return decodeXmlText(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'object') return textOf((value as Node)['#text']);
  return undefined;
}

const asArray = <T>(value: unknown): T[] => (value === undefined || value === null ? [] : Array.isArray(value) ? (value as T[]) : [value as T]);

const attr = (node: Node, name: string): string | undefined => {
  const value = node[name];
  return typeof value === 'string' ? decodeXmlText(value) : undefined;
};

/** `base` + `href` as a path in the package: URL-decoded, `./` and inner `..` resolved; undefined when it would leave the package or is an address. */
export function packagePath(base: string, href: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('//')) return undefined;
  let decoded: string;
  try {
    decoded = decodeURIComponent(href.split('#')[0]!.split('?')[0]!);
  } catch {
    decoded = href;
  }
  if (decoded.startsWith('/')) return undefined;
  const parts: string[] = [];
  for (const part of `${base}${decoded}`.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) return undefined;
      parts.pop();
    } else parts.push(part);
  }
  return parts.length > 0 ? parts.join('/') : undefined;
}

/** The directory part of a package path, with its trailing slash ('' at the root). */
export const dirOf = (path: string): string => (path.includes('/') ? path.slice(0, path.lastIndexOf('/') + 1) : '');

function versionOf(raw: string, schemaVersion: string | undefined): CartridgeVersion | undefined {
  if (/imsccv1p3\//.test(raw) || schemaVersion?.startsWith('1.3')) return '1.3';
  if (/imsccv1p2\//.test(raw) || schemaVersion?.startsWith('1.2')) return '1.2';
  if (/imsccv1p1\//.test(raw) || schemaVersion?.startsWith('1.1')) return '1.1';
  if (/xsd\/imscc\/imscp_v1p1/.test(raw) || schemaVersion?.startsWith('1.0')) return '1.0';
  return undefined;
}

function readItem(node: Node, depth: number): OrgItem {
  if (depth > 32) throw new CartridgeRefused('imsmanifest.xml nests its organization deeper than 32 levels');
  const identifier = attr(node, 'identifier') ?? '';
  return {
    identifier,
    title: (textOf(node.title) ?? '').trim(),
    identifierref: attr(node, 'identifierref'),
    children: asArray<Node>(node.item).map((child) => readItem(child, depth + 1)),
  };
}

/** The manifest's course structure and resources. */
export function readManifest(bytes: Buffer): Manifest {
  const raw = bytes.toString('utf8');
  const doc = parseCartridgeXml(bytes, 'imsmanifest.xml');
  // An empty <manifest/> parses as an empty string.
  const manifest = (doc.manifest === '' ? {} : doc.manifest) as Node | undefined;
  if (!manifest || typeof manifest !== 'object') throw new CartridgeRefused('imsmanifest.xml has no <manifest> root element');
  const metadata = (manifest.metadata ?? {}) as Node;
  const schema = textOf(metadata.schema) ?? '';
  const version = versionOf(raw, textOf(metadata.schemaversion));
  if (!version) throw new CartridgeRefused('imsmanifest.xml is not a Common Cartridge manifest (no IMS CC 1.0–1.3 namespace or schema version)');
  const lom = (metadata.lom ?? {}) as Node;
  const general = (lom.general ?? {}) as Node;
  const titleNode = general.title as Node | undefined;
  const title = (titleNode ? textOf(asArray<unknown>(titleNode.string)[0] ?? titleNode) : undefined)?.trim() || null;
  const descriptionNode = general.description as Node | undefined;
  const description = (descriptionNode ? textOf(asArray<unknown>(descriptionNode.string)[0] ?? descriptionNode) : undefined)?.trim() || null;

  const organizations = asArray<Node>((manifest.organizations as Node | undefined)?.organization);
  let items: OrgItem[] = [];
  const organization = organizations[0];
  if (organization) {
    const roots = asArray<Node>(organization.item).map((item) => readItem(item, 0));
    // CC wraps the whole tree in one root item (identifier "LearningModules" and the like).
    items = roots.length === 1 && !roots[0]!.identifierref ? roots[0]!.children : roots;
  }

  const resources = new Map<string, ManifestResource>();
  for (const node of asArray<Node>((manifest.resources as Node | undefined)?.resource)) {
    const identifier = attr(node, 'identifier');
    if (!identifier) continue;
    const base = attr(node, 'base') ?? '';
    const baseDir = base && !base.endsWith('/') ? `${base}/` : base;
    const hrefAttr = attr(node, 'href');
    const files = asArray<Node>(node.file)
      .map((file) => attr(file, 'href'))
      .filter((href): href is string => !!href)
      .map((href) => packagePath(baseDir, href))
      .filter((path): path is string => !!path);
    resources.set(identifier, {
      identifier,
      type: attr(node, 'type') ?? '',
      href: hrefAttr ? packagePath(baseDir, hrefAttr) : undefined,
      files,
      dependencies: asArray<Node>(node.dependency)
        .map((d) => attr(d, 'identifierref'))
        .filter((d): d is string => !!d),
      instructorOnly: isInstructorOnly(node.metadata),
    });
  }
  return { version, thin: /thin/i.test(schema), title, description, items, resources };
}

/** `<metadata><lom><educational><intendedEndUserRole><value>Instructor</value>` (CC's roles vocabulary). */
function isInstructorOnly(metadata: unknown): boolean {
  const educational = asArray<Node>(((metadata as Node | undefined)?.lom as Node | undefined)?.educational);
  return educational.some((e) => asArray<Node>(e.intendedEndUserRole).some((role) => /^instructor$/i.test(textOf(role.value)?.trim() ?? '')));
}

/** A web link (imswl_xmlv1pN): its title and URL. */
export function readWebLink(bytes: Buffer, what: string): { title?: string; url?: string } {
  const doc = parseCartridgeXml(bytes, what);
  const link = (doc.webLink ?? doc.weblink ?? {}) as Node;
  const url = link.url as Node | undefined;
  return { title: textOf(link.title)?.trim(), url: url ? attr(url, 'href') : undefined };
}

/** A discussion topic (imsdt_xmlv1pN): its title and text (HTML or plain). */
export function readTopic(bytes: Buffer, what: string): { title?: string; text: string; html: boolean } {
  const doc = parseCartridgeXml(bytes, what);
  const topic = (doc.topic ?? {}) as Node;
  const textNode = topic.text;
  const type = textNode && typeof textNode === 'object' && !Array.isArray(textNode) ? attr(textNode as Node, 'texttype') : undefined;
  return { title: textOf(topic.title)?.trim(), text: textOf(textNode) ?? '', html: type !== 'text/plain' };
}

export interface LtiLinkDescriptor {
  title?: string;
  launchUrl?: string;
  /** `<blti:custom>`'s properties, by name, in their order. */
  custom: Array<[string, string]>;
  /** `<blti:extensions platform="…">`: each platform's properties. */
  extensions: Array<{ platform: string; properties: Map<string, string> }>;
}

const propertiesOf = (node: unknown): Array<[string, string]> =>
  asArray<Node>(node && typeof node === 'object' && !Array.isArray(node) ? (node as Node).property : undefined).flatMap((p) => {
    const name = typeof p === 'object' ? attr(p, 'name') : undefined;
    return name ? [[name, (textOf(p) ?? '').trim()] as [string, string]] : [];
  });

/** A basic LTI link (imsbasiclti_xmlv1pN): its title, launch URL (the secure one first), custom parameters and extensions. */
export function readLtiLink(bytes: Buffer, what: string): LtiLinkDescriptor {
  const doc = parseCartridgeXml(bytes, what);
  const link = (doc.cartridge_basiclti_link ?? doc.basic_lti_link ?? {}) as Node;
  return {
    title: textOf(link.title)?.trim(),
    launchUrl: (textOf(link.secure_launch_url)?.trim() || textOf(link.launch_url)?.trim()) || undefined,
    custom: propertiesOf(link.custom),
    extensions: asArray<Node>(link.extensions).map((e) => ({ platform: (typeof e === 'object' ? attr(e, 'platform') : undefined) ?? '', properties: new Map(propertiesOf(e)) })),
  };
}

/** Canvas's assignment_settings.xml: the points and due date CC has no place for. */
export function readCanvasAssignment(bytes: Buffer, what: string): { title?: string; points?: number; dueAt?: string } {
  const doc = parseCartridgeXml(bytes, what);
  const assignment = (doc.assignment ?? {}) as Node;
  const points = Number(textOf(assignment.points_possible));
  const due = textOf(assignment.due_at)?.trim();
  return {
    title: textOf(assignment.title)?.trim(),
    points: Number.isFinite(points) && points > 0 ? points : undefined,
    dueAt: due && !Number.isNaN(Date.parse(due)) ? new Date(due).toISOString() : undefined,
  };
}

/** A CC 1.3 assignment (assignment_xmlv1p0): title, instructions, points. */
export function readCcAssignment(bytes: Buffer, what: string): { title?: string; text: string; points?: number } {
  const doc = parseCartridgeXml(bytes, what);
  const assignment = (doc.assignment ?? {}) as Node;
  const gradable = assignment.gradable as Node | undefined;
  const points = Number(gradable && typeof gradable === 'object' ? attr(gradable, 'points_possible') : undefined);
  return {
    title: textOf(assignment.title)?.trim(),
    text: textOf(assignment.text) ?? '',
    points: Number.isFinite(points) && points > 0 ? points : undefined,
  };
}

/** Canvas's course_settings/module_meta.xml: each module's name (which CC's items may lack) and position (Canvas's order of modules). */
export function readCanvasModules(bytes: Buffer): Map<string, { title?: string; position?: number }> {
  const doc = parseCartridgeXml(bytes, 'course_settings/module_meta.xml');
  const modules = new Map<string, { title?: string; position?: number }>();
  for (const module of asArray<Node>((doc.modules as Node | undefined)?.module)) {
    const identifier = attr(module, 'identifier');
    if (!identifier) continue;
    const title = textOf(module.title)?.trim() || undefined;
    const position = Number(textOf(module.position));
    modules.set(identifier, { title, ...(Number.isFinite(position) ? { position } : {}) });
  }
  return modules;
}
