// A course as an IMS Common Cartridge 1.3 (GET /api/courses/{id}/export?format=imscc): its sections
// and modules are the organization, activities its items; a document linked to an activity is web
// content (its Markdown rendered as an HTML page), an activity with only a URL a web link (imswl), a
// discussion a topic (imsdt) with its document's text, an `lti` activity a basic LTI link (its launch
// URL, custom parameters, and extensions naming its tool); documents linked to the course itself are web
// content outside the organization. Identifiers carry our ids (`sec_…`, `mod_…`, `act_…`), so that
// importing the file back into the same course updates it. Written with yazl as a stream; each
// document is read and rendered in a turn of its own, so a large course never holds the event loop.
import { Readable } from 'node:stream';
import { and, asc, eq, inArray, isNull } from 'drizzle-orm';
import yazl from 'yazl';
import { documentContexts, documents, ltiLinks, ltiTools, type ActivityType } from '../../db/schema';
import { linkCustomOf } from '../activities/lti-links';
import { EXPORT_PLATFORM } from './text';
import { listModuleActivities } from '../activities/service';
import type { Deps } from '../context';
import type { CourseRow } from '../courses/service';
import { listCourseModules, listSections } from '../courses/structure';
import { blobPath } from '../files/blobs';
import { listCourseFiles, type CourseFileRow } from '../files/service';
import { markdownToHtml } from '../../export/markdown';
import { escapeHtml } from '../lib/html';
import { yieldToEventLoop } from '../lib/event-loop';

export const CC13_NAMESPACE = 'http://www.imsglobal.org/xsd/imsccv1p3/imscp_v1p1';
const LOM_MANIFEST = 'http://ltsc.ieee.org/xsd/imsccv1p3/LOM/manifest';
const WEBLINK_NAMESPACE = 'http://www.imsglobal.org/xsd/imsccv1p3/imswl_v1p3';
const TOPIC_NAMESPACE = 'http://www.imsglobal.org/xsd/imsccv1p3/imsdt_v1p3';
const LTI_CC_NAMESPACE = 'http://www.imsglobal.org/xsd/imslticc_v1p0';
const BLTI_NAMESPACE = 'http://www.imsglobal.org/xsd/imsbasiclti_v1p0';
const LTICM_NAMESPACE = 'http://www.imsglobal.org/xsd/imslticm_v1p0';
const LTICP_NAMESPACE = 'http://www.imsglobal.org/xsd/imslticp_v1p0';
const LTI_SCHEMA_LOCATIONS = [
  LTI_CC_NAMESPACE,
  'http://www.imsglobal.org/xsd/lti/ltiv1p0/imslticc_v1p0.xsd',
  BLTI_NAMESPACE,
  'http://www.imsglobal.org/xsd/lti/ltiv1p0/imsbasiclti_v1p0p1.xsd',
  LTICM_NAMESPACE,
  'http://www.imsglobal.org/xsd/lti/ltiv1p0/imslticm_v1p0.xsd',
  LTICP_NAMESPACE,
  'http://www.imsglobal.org/xsd/lti/ltiv1p0/imslticp_v1p0.xsd',
].join(' ');
const SCHEMA_LOCATIONS = [
  CC13_NAMESPACE,
  'http://www.imsglobal.org/profile/cc/ccv1p3/ccv1p3_imscp_v1p2_v1p0.xsd',
  LOM_MANIFEST,
  'http://www.imsglobal.org/profile/cc/ccv1p3/LOM/ccv1p3_lommanifest_v1p0.xsd',
].join(' ');

const xml = (text: string): string => escapeHtml(text).replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '');

interface ExportActivity {
  id: string;
  title: string;
  type: ActivityType;
  deepLinkUrl: string | null;
  documentId?: string;
  /** An `lti` activity's tool and link. */
  lti?: { launchUrl: string; custom: Record<string, string>; toolId: string; toolName: string };
}

interface ExportModule {
  id: string;
  title: string;
  activities: ExportActivity[];
}

/** Everything the cartridge holds but the documents' text, read in one go. */
function outline(deps: Deps, course: CourseRow) {
  const sections = listSections(deps.db, course, { page: 1, per_page: 1_000_000 }).rows;
  const modules = listCourseModules(deps.db, course).rows;
  const activityRows = modules.map((m) => ({ module: m, rows: listModuleActivities(deps.db, m.id).rows }));
  const activityIds = activityRows.flatMap((m) => m.rows.map((a) => a.id));
  // Documents in the trash stay out; an activity shows the first document linked to it.
  const links = deps.db
    .select({ documentId: documentContexts.documentId, type: documentContexts.contextType, contextId: documentContexts.contextId, title: documents.title })
    .from(documentContexts)
    .innerJoin(documents, eq(documents.id, documentContexts.documentId))
    .where(
      and(
        eq(documentContexts.tenantId, course.tenantId),
        isNull(documents.trashedAt),
        activityIds.length > 0
          ? inArray(documentContexts.contextId, [course.id, ...activityIds])
          : eq(documentContexts.contextId, course.id),
      ),
    )
    .orderBy(asc(documentContexts.createdAt), asc(documentContexts.documentId))
    .all();
  const documentOf = new Map<string, string>();
  const titles = new Map<string, string>();
  const courseDocuments: string[] = [];
  for (const link of links) {
    titles.set(link.documentId, link.title);
    if (link.type === 'activity' && !documentOf.has(link.contextId)) documentOf.set(link.contextId, link.documentId);
    if (link.type === 'course') courseDocuments.push(link.documentId);
  }
  const ltiOf = new Map(
    deps.db
      .select({ link: ltiLinks, tool: ltiTools })
      .from(ltiLinks)
      .innerJoin(ltiTools, eq(ltiTools.id, ltiLinks.toolId))
      .where(and(eq(ltiLinks.courseId, course.id), eq(ltiLinks.tenantId, course.tenantId)))
      .all()
      .map(({ link, tool }) => [link.activityId, { launchUrl: link.url ?? tool.targetLinkUri, custom: linkCustomOf(link), toolId: tool.id, toolName: tool.name }] as const),
  );
  const toModule = (m: (typeof activityRows)[number]): ExportModule => ({
    id: m.module.id,
    title: m.module.title,
    activities: m.rows.map((a) => ({ id: a.id, title: a.title, type: a.type, deepLinkUrl: a.deepLinkUrl, documentId: documentOf.get(a.id), lti: a.type === 'lti' ? ltiOf.get(a.id) : undefined })),
  });
  const loose = activityRows.filter((m) => m.module.sectionId === null).map(toModule);
  const bySection = sections.map((s) => ({ id: s.id, title: s.title, modules: activityRows.filter((m) => m.module.sectionId === s.id).map(toModule) }));
  const shown = new Set(documentOf.values());
  return { loose, sections: bySection, titles, courseDocuments: [...new Set(courseDocuments)].filter((id) => !shown.has(id)) };
}

type Resource =
  | { kind: 'page'; identifier: string; documentId: string; href: string }
  | { kind: 'file'; identifier: string; href: string; blob: string }
  | { kind: 'link'; identifier: string; href: string; title: string; url: string }
  | { kind: 'topic'; identifier: string; href: string; title: string; documentId?: string }
  | { kind: 'lti'; identifier: string; href: string; title: string; lti: NonNullable<ExportActivity['lti']> };

const pagePath = (documentId: string) => `pages/${documentId}.html`;

/** Where a course file goes in the package: web_resources/<folder>/<name>, as Canvas writes them. */
const filePath = (file: CourseFileRow) => ['web_resources', ...(file.folder ? file.folder.split('/') : []), file.name].join('/');

/** The organization and resources of the course, and what each resource needs written. */
function plan(deps: Deps, course: CourseRow, shape: ReturnType<typeof outline>, files: CourseFileRow[]) {
  const resources = new Map<string, Resource>();
  for (const file of files) {
    const ref = `file_${file.id}`;
    resources.set(ref, { kind: 'file', identifier: ref, href: filePath(file), blob: blobPath(deps.config.dataDir, file.sha256) });
  }
  const itemXml = (a: ExportActivity): string => {
    let ref: string;
    if (a.lti) {
      ref = `res_${a.id}`;
      resources.set(ref, { kind: 'lti', identifier: ref, href: `${ref}/basiclti.xml`, title: a.title, lti: a.lti });
    } else if (a.type === 'discussion') {
      ref = `res_${a.id}`;
      resources.set(ref, { kind: 'topic', identifier: ref, href: `${ref}/topic.xml`, title: a.title, documentId: a.documentId });
    } else if (a.documentId) {
      ref = `doc_${a.documentId}`;
      resources.set(ref, { kind: 'page', identifier: ref, documentId: a.documentId, href: pagePath(a.documentId) });
    } else if (a.deepLinkUrl) {
      ref = `res_${a.id}`;
      resources.set(ref, { kind: 'link', identifier: ref, href: `${ref}/weblink.xml`, title: a.title, url: a.deepLinkUrl });
    } else {
      // An activity with neither text nor address: a page with its title, so that it comes back.
      ref = `res_${a.id}`;
      resources.set(ref, { kind: 'page', identifier: ref, documentId: '', href: `pages/${a.id}.html` });
    }
    return `<item identifier="act_${a.id}" identifierref="${ref}"><title>${xml(a.title)}</title></item>`;
  };
  const moduleXml = (m: ExportModule) => `<item identifier="mod_${m.id}"><title>${xml(m.title)}</title>${m.activities.map(itemXml).join('')}</item>`;
  const items = [
    ...shape.loose.map(moduleXml),
    ...shape.sections.map((s) => `<item identifier="sec_${s.id}"><title>${xml(s.title)}</title>${s.modules.map(moduleXml).join('')}</item>`),
  ].join('\n        ');
  for (const documentId of shape.courseDocuments) {
    const ref = `doc_${documentId}`;
    resources.set(ref, { kind: 'page', identifier: ref, documentId, href: pagePath(documentId) });
  }
  const resourceXml = [...resources.values()]
    .map((r) => {
      if (r.kind === 'page') return `<resource identifier="${r.identifier}" type="webcontent" href="${xml(r.href)}"><file href="${xml(r.href)}"/></resource>`;
      if (r.kind === 'file') return `<resource identifier="${r.identifier}" type="webcontent"><file href="${xml(r.href)}"/></resource>`;
      if (r.kind === 'link') return `<resource identifier="${r.identifier}" type="imswl_xmlv1p3"><file href="${xml(r.href)}"/></resource>`;
      if (r.kind === 'lti') return `<resource identifier="${r.identifier}" type="imsbasiclti_xmlv1p0"><file href="${xml(r.href)}"/></resource>`;
      return `<resource identifier="${r.identifier}" type="imsdt_xmlv1p3"><file href="${xml(r.href)}"/></resource>`;
    })
    .join('\n    ');
  const manifest = `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="course_${course.id}" xmlns="${CC13_NAMESPACE}" xmlns:lomimscc="${LOM_MANIFEST}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="${SCHEMA_LOCATIONS}">
  <metadata>
    <schema>IMS Common Cartridge</schema>
    <schemaversion>1.3.0</schemaversion>
    <lomimscc:lom>
      <lomimscc:general>
        <lomimscc:title><lomimscc:string>${xml(course.title)}</lomimscc:string></lomimscc:title>${
          course.description ? `\n        <lomimscc:description><lomimscc:string>${xml(course.description)}</lomimscc:string></lomimscc:description>` : ''
        }
      </lomimscc:general>
    </lomimscc:lom>
  </metadata>
  <organizations>
    <organization identifier="org_1" structure="rooted-hierarchy">
      <item identifier="LearningModules">
        ${items}
      </item>
    </organization>
  </organizations>
  <resources>
    ${resourceXml}
  </resources>
</manifest>
`;
  return { manifest, resources: [...resources.values()] };
}

/**
 * A basic LTI link as the cartridge's LTI profile orders it: title, description, custom, extensions,
 * launch_url, secure_launch_url, icon, vendor (code and name required). Our extensions name the tool
 * and the link's launch URL, so that the link goes back to the same tool when imported here.
 */
function basicLtiXml(title: string, lti: NonNullable<ExportActivity['lti']>): string {
  const property = ([name, value]: [string, string]) => `\n    <lticm:property name="${xml(name)}">${xml(value)}</lticm:property>`;
  const custom = Object.entries(lti.custom);
  const secure = lti.launchUrl.startsWith('https://');
  let host = 'unknown';
  try {
    host = new URL(lti.launchUrl).hostname || host;
  } catch {
    // kept as unknown
  }
  return `<?xml version="1.0" encoding="UTF-8"?>
<cartridge_basiclti_link xmlns="${LTI_CC_NAMESPACE}" xmlns:blti="${BLTI_NAMESPACE}" xmlns:lticm="${LTICM_NAMESPACE}" xmlns:lticp="${LTICP_NAMESPACE}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="${LTI_SCHEMA_LOCATIONS}">
  <blti:title>${xml(title)}</blti:title>${custom.length > 0 ? `\n  <blti:custom>${custom.map(property).join('')}\n  </blti:custom>` : ''}
  <blti:extensions platform="${EXPORT_PLATFORM}">${property(['tool_id', lti.toolId])}${property(['tool_name', lti.toolName])}
  </blti:extensions>
  <blti:launch_url>${xml(lti.launchUrl)}</blti:launch_url>${secure ? `\n  <blti:secure_launch_url>${xml(lti.launchUrl)}</blti:secure_launch_url>` : ''}
  <blti:vendor>
    <lticp:code>${xml(host)}</lticp:code>
    <lticp:name>${xml(lti.toolName)}</lticp:name>
  </blti:vendor>
</cartridge_basiclti_link>
`;
}

const htmlPage = (title: string, body: string) =>
  `<!DOCTYPE html>\n<html>\n<head>\n<meta charset="utf-8">\n<title>${escapeHtml(title)}</title>\n</head>\n<body>\n${body}</body>\n</html>\n`;

/** The course as a Common Cartridge 1.3 zip, streamed. */
export function exportCartridge(deps: Deps, course: CourseRow): Readable {
  const shape = outline(deps, course);
  const files = listCourseFiles(deps.db, course.tenantId, course.id, { page: 1, per_page: 1_000_000 }).rows;
  const { manifest, resources } = plan(deps, course, shape, files);
  const fileHref = new Map(files.map((f) => [f.id, `../${filePath(f).split('/').map(encodeURIComponent).join('/')}`]));
  const zip = new yazl.ZipFile();
  zip.addBuffer(Buffer.from(manifest), 'imsmanifest.xml');
  const exported = new Set(resources.flatMap((r) => (r.kind === 'page' && r.documentId ? [r.documentId] : [])));
  // Links between documents become links between their pages.
  const relink = (markdown: string) =>
    markdown
      .replace(/\/api\/documents\/([0-9a-f-]{36})\b/g, (whole, id: string) => (exported.has(id) ? `${id}.html` : whole))
      .replace(/\/api\/files\/([0-9a-f-]{36})\/content\b/g, (whole, id: string) => fileHref.get(id) ?? whole);
  const textOf = (documentId: string) => relink(deps.documents.getText(documentId));
  void (async () => {
    try {
      for (const resource of resources) {
        if (resource.kind === 'file') {
          zip.addFile(resource.blob, resource.href, { compress: false });
        } else if (resource.kind === 'page') {
          const title = resource.documentId ? (shape.titles.get(resource.documentId) ?? '') : '';
          const body = resource.documentId ? markdownToHtml(textOf(resource.documentId)) : '';
          zip.addBuffer(Buffer.from(htmlPage(title, body)), resource.href);
        } else if (resource.kind === 'link') {
          zip.addBuffer(
            Buffer.from(
              `<?xml version="1.0" encoding="UTF-8"?>\n<webLink xmlns="${WEBLINK_NAMESPACE}">\n  <title>${xml(resource.title)}</title>\n  <url href="${xml(resource.url)}" target="_blank"/>\n</webLink>\n`,
            ),
            resource.href,
          );
        } else if (resource.kind === 'lti') {
          zip.addBuffer(Buffer.from(basicLtiXml(resource.title, resource.lti)), resource.href);
        } else {
          const html = resource.documentId ? markdownToHtml(textOf(resource.documentId)) : '';
          zip.addBuffer(
            Buffer.from(
              `<?xml version="1.0" encoding="UTF-8"?>\n<topic xmlns="${TOPIC_NAMESPACE}">\n  <title>${xml(resource.title)}</title>\n  <text texttype="text/html">${xml(html)}</text>\n</topic>\n`,
            ),
            resource.href,
          );
        }
        await yieldToEventLoop();
      }
      zip.end();
    } catch (error) {
      (zip.outputStream as unknown as Readable).destroy(error instanceof Error ? error : new Error(String(error)));
    }
  })();
  return zip.outputStream as Readable;
}
