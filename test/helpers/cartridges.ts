// Common Cartridges built in the tests (never copied from elsewhere): a manifest of any CC version
// (1.0–1.3, Thin CC) with every resource type, zipped with yazl; a hand-written zip for the hostile
// packages yazl refuses to make (paths with "..", lying sizes, duplicate names); and the multipart
// form that uploads one.
import { deflateRawSync, crc32 } from 'node:zlib';
import yazl from 'yazl';

export type CcVersion = '1.0' | '1.1' | '1.2' | '1.3';

const v = (version: CcVersion) => version.replace('.', 'p').replace(/^/, 'v');

export function namespaces(version: CcVersion) {
  const p = v(version); // v1p3
  if (version === '1.0') {
    return {
      manifest: 'http://www.imsglobal.org/xsd/imscc/imscp_v1p1',
      weblink: 'http://www.imsglobal.org/xsd/imswl_v1p0',
      topic: 'http://www.imsglobal.org/xsd/imsdt_v1p0',
      wlType: 'imswl_xmlv1p0',
      dtType: 'imsdt_xmlv1p0',
      qtiType: 'imsqti_xmlv1p2/imscc_xmlv1p0/assessment',
    };
  }
  return {
    manifest: `http://www.imsglobal.org/xsd/imscc${p}/imscp_v1p1`,
    weblink: `http://www.imsglobal.org/xsd/imscc${p}/imswl_${p}`,
    topic: `http://www.imsglobal.org/xsd/imscc${p}/imsdt_${p}`,
    wlType: `imswl_xml${p}`,
    dtType: `imsdt_xml${p}`,
    qtiType: `imsqti_xmlv1p2/imscc_xml${p}/assessment`,
  };
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export interface Item {
  identifier: string;
  title?: string;
  ref?: string;
  children?: Item[];
}

export interface Resource {
  identifier: string;
  type: string;
  href?: string;
  files: string[];
}

export function manifestXml(opts: { version: CcVersion; thin?: boolean; title?: string; items: Item[]; resources: Resource[]; extra?: string }): string {
  const ns = namespaces(opts.version);
  const item = (i: Item): string =>
    `<item identifier="${esc(i.identifier)}"${i.ref ? ` identifierref="${esc(i.ref)}"` : ''}>${i.title !== undefined ? `<title>${esc(i.title)}</title>` : ''}${(i.children ?? []).map(item).join('')}</item>`;
  return `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="man1" xmlns="${ns.manifest}" xmlns:lomimscc="http://ltsc.ieee.org/xsd/imscc${v(opts.version)}/LOM/manifest">
  <metadata>
    <schema>${opts.thin ? 'IMS Thin Common Cartridge' : 'IMS Common Cartridge'}</schema>
    <schemaversion>${opts.version}.0</schemaversion>
    ${opts.title !== undefined ? `<lomimscc:lom><lomimscc:general><lomimscc:title><lomimscc:string>${esc(opts.title)}</lomimscc:string></lomimscc:title></lomimscc:general></lomimscc:lom>` : ''}
  </metadata>
  <organizations>
    <organization identifier="org1" structure="rooted-hierarchy">
      <item identifier="root">${opts.items.map(item).join('')}</item>
    </organization>
  </organizations>
  <resources>
    ${opts.resources
      .map(
        (r) =>
          `<resource identifier="${esc(r.identifier)}" type="${esc(r.type)}"${r.href ? ` href="${esc(r.href)}"` : ''}>${r.files.map((f) => `<file href="${esc(f)}"/>`).join('')}</resource>`,
      )
      .join('\n    ')}
  </resources>${opts.extra ?? ''}
</manifest>
`;
}

export const webLinkXml = (version: CcVersion, title: string, url: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><webLink xmlns="${namespaces(version).weblink}"><title>${esc(title)}</title><url href="${esc(url)}" target="_blank"/></webLink>`;

export const topicXml = (version: CcVersion, title: string, html: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><topic xmlns="${namespaces(version).topic}"><title>${esc(title)}</title><text texttype="text/html">${esc(html)}</text></topic>`;

export const ltiXml = (
  title: string,
  launchUrl: string,
  options: { secureLaunchUrl?: string; custom?: Record<string, string>; extensions?: { platform: string; properties: Record<string, string> } } = {},
) => {
  const props = (values: Record<string, string>) => Object.entries(values).map(([name, value]) => `<lticm:property name="${esc(name)}">${esc(value)}</lticm:property>`).join('');
  return `<?xml version="1.0" encoding="UTF-8"?><cartridge_basiclti_link xmlns="http://www.imsglobal.org/xsd/imslticc_v1p0" xmlns:blti="http://www.imsglobal.org/xsd/imsbasiclti_v1p0" xmlns:lticm="http://www.imsglobal.org/xsd/imslticm_v1p0" xmlns:lticp="http://www.imsglobal.org/xsd/imslticp_v1p0"><blti:title>${esc(title)}</blti:title>${
    options.custom ? `<blti:custom>${props(options.custom)}</blti:custom>` : ''
  }${options.extensions ? `<blti:extensions platform="${esc(options.extensions.platform)}">${props(options.extensions.properties)}</blti:extensions>` : ''}<blti:launch_url>${esc(launchUrl)}</blti:launch_url>${
    options.secureLaunchUrl ? `<blti:secure_launch_url>${esc(options.secureLaunchUrl)}</blti:secure_launch_url>` : ''
  }<blti:vendor><lticp:code>test</lticp:code><lticp:name>Test</lticp:name></blti:vendor></cartridge_basiclti_link>`;
};

export const page = (title: string, body: string) => `<!DOCTYPE html><html><head><title>${esc(title)}</title></head><body>${body}</body></html>`;

/** A zip of these files, written by yazl (deflated). */
export function zipOf(files: Record<string, string | Buffer>, options: { modes?: Record<string, number> } = {}): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, data] of Object.entries(files)) {
    zip.addBuffer(Buffer.isBuffer(data) ? data : Buffer.from(data), name, options.modes?.[name] ? { mode: options.modes[name] } : {});
  }
  zip.end();
  const chunks: Buffer[] = [];
  return new Promise((resolve, reject) => {
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
  });
}

export interface RawEntry {
  name: string;
  data: Buffer;
  deflate?: boolean;
  /** What the headers say the inflated size is (default: the truth). */
  declaredSize?: number;
  /** Unix mode (the high half of the external attributes): 0o120777 for a link. */
  mode?: number;
}

/** A zip written by hand, so that it can say what yazl never would (names with "..", lying sizes, twice the same name). */
export function rawZip(entries: RawEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name);
    const body = entry.deflate ? deflateRawSync(entry.data, { level: 9 }) : entry.data;
    const crc = crc32(entry.data);
    const size = entry.declaredSize ?? entry.data.length;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(entry.deflate ? 8 : 0, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by Unix
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(entry.deflate ? 8 : 0, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((entry.mode ?? 0o100644) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, body);
    centrals.push(central, name);
    offset += local.length + name.length + body.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** The multipart body and headers of an upload of `bytes` as `file` (and `course_id`). */
export async function importForm(bytes: Buffer, fields: { course_id?: string; filename?: string } = {}) {
  const form = new FormData();
  if (fields.course_id !== undefined) form.append('course_id', fields.course_id);
  form.append('file', new Blob([bytes], { type: 'application/zip' }), fields.filename ?? 'course.imscc');
  const request = new Request('http://localhost/', { method: 'POST', body: form });
  return { rawBody: new Uint8Array(await request.arrayBuffer()), headers: { 'Content-Type': request.headers.get('content-type')! } };
}

/**
 * A full cartridge of `version` with every resource type: two sections' worth of structure (a
 * module of pages, a module of links and a discussion), a PDF, an LTI link, a QTI quiz and an
 * unknown resource. Thin CC: links and LTI only.
 */
export async function fullCartridge(version: CcVersion, options: { thin?: boolean; title?: string } = {}) {
  const ns = namespaces(version);
  if (options.thin) {
    return zipOf({
      'imsmanifest.xml': manifestXml({
        version,
        thin: true,
        title: options.title ?? 'Thin course',
        items: [{ identifier: 'm1', title: 'Links', children: [{ identifier: 'i1', title: 'Docs', ref: 'r1' }, { identifier: 'i2', title: 'Tool', ref: 'r2' }] }],
        resources: [
          { identifier: 'r1', type: ns.wlType, files: ['r1/link.xml'] },
          { identifier: 'r2', type: 'imsbasiclti_xmlv1p0', files: ['r2/lti.xml'] },
        ],
      }),
      'r1/link.xml': webLinkXml(version, 'Docs', 'https://example.org/docs'),
      'r2/lti.xml': ltiXml('Tool', 'https://tool.example.com/launch'),
    });
  }
  const resources: Resource[] = [
    { identifier: 'r_intro', type: 'webcontent', href: 'pages/intro.html', files: ['pages/intro.html'] },
    { identifier: 'r_more', type: 'webcontent', href: 'pages/more.html', files: ['pages/more.html', 'files/slides.pdf'] },
    { identifier: 'r_link', type: ns.wlType, files: ['r_link/weblink.xml'] },
    { identifier: 'r_topic', type: ns.dtType, files: ['r_topic/topic.xml'] },
    { identifier: 'r_quiz', type: ns.qtiType, files: ['r_quiz/assessment.xml'] },
    { identifier: 'r_odd', type: 'x-vendor/odd', files: ['r_odd/odd.bin'] },
  ];
  const items: Item[] = [
    {
      identifier: 's1',
      title: 'Week 1',
      children: [
        {
          identifier: 'm1',
          title: 'Reading',
          children: [
            { identifier: 'i_intro', title: 'Introduction', ref: 'r_intro' },
            { identifier: 'i_more', title: 'More & more', ref: 'r_more' },
          ],
        },
        {
          identifier: 'm2',
          title: 'Talk',
          children: [
            { identifier: 'i_link', title: 'A link', ref: 'r_link' },
            { identifier: 'i_topic', title: 'Say hello', ref: 'r_topic' },
          ],
        },
      ],
    },
    {
      identifier: 'm3',
      title: 'Extras',
      children: [
        { identifier: 'i_quiz', title: 'Quiz', ref: 'r_quiz' },
        { identifier: 'i_odd', title: 'Odd', ref: 'r_odd' },
      ],
    },
  ];
  const files: Record<string, string | Buffer> = {
    'pages/intro.html': page(
      'Introduction',
      '<h1>Welcome</h1><p onclick="steal()">Read <a href="more.html">the next page</a> and <a href="$IMS-CC-FILEBASE$/files/slides.pdf">the slides</a>.</p><script>alert(1)</script><p><a href="javascript:alert(2)">bad</a> <a href="https://example.org/">out</a></p>',
    ),
    'pages/more.html': page('More', '<h2>More</h2><ul><li>one</li><li>two</li></ul><img src="../files/slides.pdf" alt="slides" onerror="x()">'),
    'files/slides.pdf': Buffer.from('%PDF-1.4\n%test\n'),
    'r_link/weblink.xml': webLinkXml(version, 'A link', 'https://example.org/resource'),
    'r_topic/topic.xml': topicXml(version, 'Say hello', '<p>Introduce <strong>yourself</strong>.</p>'),
    'r_quiz/assessment.xml': '<questestinterop/>',
    'r_odd/odd.bin': 'odd',
  };
  if (version !== '1.0') {
    resources.push({ identifier: 'r_lti', type: 'imsbasiclti_xmlv1p0', files: ['r_lti/lti.xml'] });
    items[1]!.children!.push({ identifier: 'i_lti', title: 'External tool', ref: 'r_lti' });
    files['r_lti/lti.xml'] = ltiXml('External tool', 'https://tool.example.com/launch');
  }
  files['imsmanifest.xml'] = manifestXml({ version, title: options.title ?? `Course ${version}`, items, resources });
  return zipOf(files);
}
