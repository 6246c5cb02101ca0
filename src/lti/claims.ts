// The names LTI 1.3 Advantage gives things (1EdTech LTI Core 1.3, Deep Linking 2.0, AGS 2.0,
// NRPS 2.0, Dynamic Registration 1.0): claim URIs, message types, scopes, media types, and the
// LIS v2 role vocabulary our course roles map to.
export const LTI = 'https://purl.imsglobal.org/spec/lti/claim/';
export const claim = {
  messageType: `${LTI}message_type`,
  version: `${LTI}version`,
  deploymentId: `${LTI}deployment_id`,
  targetLinkUri: `${LTI}target_link_uri`,
  resourceLink: `${LTI}resource_link`,
  roles: `${LTI}roles`,
  context: `${LTI}context`,
  toolPlatform: `${LTI}tool_platform`,
  launchPresentation: `${LTI}launch_presentation`,
  custom: `${LTI}custom`,
  ags: 'https://purl.imsglobal.org/spec/lti-ags/claim/endpoint',
  nrps: 'https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice',
  deepLinkingSettings: 'https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings',
  contentItems: 'https://purl.imsglobal.org/spec/lti-dl/claim/content_items',
  dlData: 'https://purl.imsglobal.org/spec/lti-dl/claim/data',
  dlMsg: 'https://purl.imsglobal.org/spec/lti-dl/claim/msg',
  dlErrorMsg: 'https://purl.imsglobal.org/spec/lti-dl/claim/errormsg',
} as const;

export const messageTypes = { resourceLink: 'LtiResourceLinkRequest', deepLinkingRequest: 'LtiDeepLinkingRequest', deepLinkingResponse: 'LtiDeepLinkingResponse' } as const;

export const scopes = {
  lineItem: 'https://purl.imsglobal.org/spec/lti-ags/scope/lineitem',
  lineItemReadonly: 'https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly',
  resultReadonly: 'https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly',
  score: 'https://purl.imsglobal.org/spec/lti-ags/scope/score',
  memberships: 'https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly',
} as const;
export const serviceScopes = Object.values(scopes);
export type ServiceScope = (typeof serviceScopes)[number];
export const agsScopes: readonly string[] = [scopes.lineItem, scopes.lineItemReadonly, scopes.resultReadonly, scopes.score];

export const mediaTypes = {
  lineItem: 'application/vnd.ims.lis.v2.lineitem+json',
  lineItemContainer: 'application/vnd.ims.lis.v2.lineitemcontainer+json',
  score: 'application/vnd.ims.lis.v1.score+json',
  resultContainer: 'application/vnd.ims.lis.v2.resultcontainer+json',
  membershipContainer: 'application/vnd.ims.lti-nrps.v2.membershipcontainer+json',
} as const;

const LIS = 'http://purl.imsglobal.org/vocab/lis/v2/';
export const roles = {
  instructor: `${LIS}membership#Instructor`,
  teachingAssistant: `${LIS}membership/Instructor#TeachingAssistant`,
  learner: `${LIS}membership#Learner`,
  administrator: `${LIS}institution/person#Administrator`,
} as const;

export const courseOfferingType = `${LIS}course#CourseOffering`;

/** The LIS roles of a course role (and of a tenant admin, who is also an institution administrator). */
export function lisRoles(courseRole: 'instructor' | 'ta' | 'student' | undefined, tenantAdmin: boolean): string[] {
  const out: string[] = [];
  if (courseRole === 'instructor') out.push(roles.instructor);
  else if (courseRole === 'ta') out.push(roles.teachingAssistant, roles.instructor);
  else if (courseRole === 'student') out.push(roles.learner);
  if (tenantAdmin) {
    if (courseRole === undefined) out.push(roles.instructor);
    out.push(roles.administrator);
  }
  return out;
}

/** The course role a NRPS `role` filter names (full URI or the short name of the spec's examples). */
export function courseRoleOfFilter(role: string): 'instructor' | 'ta' | 'student' | null {
  const short = role.replace(/^.*[#/]/, '');
  if (role === roles.teachingAssistant || short === 'TeachingAssistant') return 'ta';
  if (short === 'Instructor') return 'instructor';
  if (short === 'Learner') return 'student';
  return null;
}

/** A user's name split as the spec's given and family names: the last word is the family name. */
export function nameParts(full: string): { given_name: string; family_name: string } {
  const words = full.trim().split(/\s+/);
  if (words.length < 2) return { given_name: words[0] ?? '', family_name: '' };
  return { given_name: words.slice(0, -1).join(' '), family_name: words[words.length - 1]! };
}
