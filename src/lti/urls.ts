// Where the platform's endpoints are, under PUBLIC_URL: the issuer of every message we sign is
// PUBLIC_URL itself (no trailing slash), and each endpoint hangs off it.
export function platformUrls(publicUrl: string) {
  const issuer = publicUrl.replace(/\/+$/, '');
  return {
    issuer,
    authorization: `${issuer}/lti/authorize`,
    token: `${issuer}/api/lti/token`,
    jwks: `${issuer}/api/lti/jwks`,
    registration: `${issuer}/api/lti/registrations`,
    openidConfiguration: `${issuer}/.well-known/openid-configuration`,
    deepLinkingReturn: `${issuer}/lti/deep-linking/return`,
    launch: (handle: string) => `${issuer}/lti/launch/${handle}`,
    lineItems: (courseId: string) => `${issuer}/api/lti/courses/${courseId}/lineitems`,
    lineItem: (courseId: string, id: string) => `${issuer}/api/lti/courses/${courseId}/lineitems/${id}`,
    memberships: (courseId: string) => `${issuer}/api/lti/courses/${courseId}/memberships`,
  };
}
export type PlatformUrls = ReturnType<typeof platformUrls>;
