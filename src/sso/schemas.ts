// Request and response shapes of SSO connections. A connection is SAML (from the IdP's metadata
// XML, or its entity ID, SSO URL and certificates) or OIDC (issuer, client id and secret); the
// client secret is write-only.
import { z } from '@hono/zod-openapi';
import { ssoProtocols, ssoProvisioning } from '../../db/schema';
import { timestamp, uuid } from '../http/openapi';
import { secretText, singleLineText } from '../http/text';

const name = singleLineText().trim().min(1).max(200).openapi({ example: 'University login' });
const claimName = singleLineText().trim().min(1).max(500);

export const attributeMappingSchema = z
  .object({
    subject: claimName.optional().openapi({
      description: 'SAML only: the attribute that identifies the person (a persistent id such as `urn:oasis:names:tc:SAML:attribute:subject-id`); default: the NameID, refused when transient',
      example: 'urn:oasis:names:tc:SAML:attribute:subject-id',
    }),
    email: claimName.openapi({ description: 'Claim or attribute holding the email address (SAML: `NameID` reads the NameID)', example: 'email' }),
    name: claimName.openapi({ description: 'Claim or attribute holding the display name', example: 'name' }),
    role: claimName.optional().openapi({ description: 'Claim or attribute (often groups) deciding the role of a user created on first sign-in', example: 'groups' }),
    admin_values: z.array(singleLineText().min(1).max(500)).max(50).optional().openapi({ description: 'Values of `role` that make the new user an admin; any other value: a member', example: ['lms-admins'] }),
  })
  .strict()
  .openapi('SsoAttributeMapping');

const domain = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, 'must be a domain such as example.edu');

const common = {
  name,
  enabled: z.boolean().optional(),
  attribute_mapping: attributeMappingSchema.optional().openapi({ description: 'Default: `email` and `name` (OIDC), the eduPerson/LDAP OIDs of mail and displayName (SAML)' }),
  provisioning: z.enum(ssoProvisioning).optional().openapi({ description: '`jit`: create a tenant member on first sign-in; `existing_only` (default): only users who exist' }),
  allowed_email_domains: z.array(domain).min(1).max(100).nullable().optional().openapi({ description: 'Only these email domains may sign in; null: any', example: ['example.edu'] }),
};

const certificate = z.string().trim().min(1).max(20_000).openapi({ description: 'PEM, or the base64 of the DER' });

const samlFields = {
  idp_metadata_xml: z.string().min(1).max(512 * 1024).optional().openapi({ description: "The IdP's SAML metadata (an EntityDescriptor); instead of the three fields below" }),
  idp_entity_id: singleLineText().trim().min(1).max(1000).optional(),
  idp_sso_url: z.url({ protocol: /^https?$/ }).max(2000).optional().openapi({ description: "The IdP's SingleSignOnService (HTTP-Redirect binding)" }),
  idp_certificates: z.array(certificate).min(1).max(10).optional().openapi({ description: 'Signing certificates; several during a rollover' }),
  allow_idp_initiated: z.boolean().optional().openapi({ description: 'Accept responses that answer no request of ours (default false)' }),
};

const oidcFields = {
  issuer: z.url({ protocol: /^https?$/ }).max(2000).openapi({ example: 'https://login.example.edu/realms/staff' }),
  client_id: singleLineText().trim().min(1).max(1000),
  client_secret: secretText().min(1).max(4000).openapi({ description: 'Stored encrypted; never shown again' }),
};

export const createConnectionBody = z
  .discriminatedUnion('protocol', [
    z.object({ protocol: z.literal('saml'), ...common, ...samlFields }).strict(),
    z.object({ protocol: z.literal('oidc'), ...common, ...oidcFields }).strict(),
  ])
  .openapi('SsoConnectionCreate');

export const updateConnectionBody = z
  .object({
    ...common,
    name: name.optional(),
    ...samlFields,
    issuer: oidcFields.issuer.optional(),
    client_id: oidcFields.client_id.optional(),
    client_secret: oidcFields.client_secret.optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, { message: 'nothing to update' })
  .openapi('SsoConnectionUpdate');

export type CreateConnectionInput = z.infer<typeof createConnectionBody>;
export type UpdateConnectionInput = z.infer<typeof updateConnectionBody>;

const certificateInfo = z
  .object({
    sha256_fingerprint: z.string().openapi({ example: 'AB:CD:…' }),
    subject: z.string(),
    not_after: timestamp,
  })
  .openapi('SsoCertificate');

export const connectionSchema = z
  .object({
    id: uuid(),
    protocol: z.enum(ssoProtocols),
    name: z.string(),
    enabled: z.boolean(),
    attribute_mapping: attributeMappingSchema,
    provisioning: z.enum(ssoProvisioning),
    allowed_email_domains: z.array(z.string()).nullable(),
    login_url: z.string().openapi({ description: 'Where the front end sends a person to sign in (add `?return_to=`)' }),
    saml: z
      .object({
        idp_entity_id: z.string(),
        idp_sso_url: z.string(),
        idp_certificates: z.array(certificateInfo),
        allow_idp_initiated: z.boolean(),
        sp_entity_id: z.string().openapi({ description: 'Our entity ID: give it to the IdP' }),
        acs_url: z.string().openapi({ description: 'Our Assertion Consumer Service (HTTP-POST): give it to the IdP' }),
        metadata_url: z.string().openapi({ description: 'Our SP metadata' }),
        sp_certificate: z.string().nullable().openapi({ description: "Our certificate for this connection (PEM): the IdP checks our AuthnRequests' signatures with it and encrypts assertions to it" }),
      })
      .nullable(),
    oidc: z
      .object({
        issuer: z.string(),
        client_id: z.string(),
        redirect_uri: z.string().openapi({ description: 'Register it with the provider' }),
      })
      .nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('SsoConnection');

export const ssoSettingsBody = z
  .object({
    member_password_sign_in: z.boolean().openapi({ description: 'false: members sign in through single sign-on only; admins keep their password' }),
  })
  .strict()
  .openapi('SsoSettingsUpdate');

export const ssoSettingsSchema = z
  .object({
    member_password_sign_in: z.boolean(),
    updated_at: timestamp.nullable(),
  })
  .openapi('SsoSettings');
