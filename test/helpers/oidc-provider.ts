// A real OpenID provider (oidc-provider 8, the certified library) on 127.0.0.1 for the SSO tests,
// with an interaction endpoint that signs in whichever account the test names next (no forms), and
// a browser that follows redirects keeping the provider's cookies.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

export interface Account {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
}

export interface TestProvider {
  issuer: string;
  /** The account the next interaction signs in. */
  signInAs(account: Account): void;
  /** How many times each path was asked for (discovery: `/.well-known/openid-configuration`). */
  hits(path: string): number;
  /** Rewrites the token endpoint's answers from now on (undefined: as the provider makes them). */
  rewriteTokenResponse(rewrite: ((body: Record<string, unknown>) => Record<string, unknown>) | undefined): void;
  /** Registers a client (confidential, code flow) with these redirect URIs. */
  addClient(clientId: string, secret: string, redirectUris: string[]): void;
  close(): Promise<void>;
}

export async function startProvider(): Promise<TestProvider> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
  const accounts = new Map<string, Account>();
  let next: Account | undefined;
  const clients: object[] = [];
  let provider: any;
  let issuer = '';

  const hits = new Map<string, number>();
  let tokenRewrite: ((body: Record<string, unknown>) => Record<string, unknown>) | undefined;
  const server = http.createServer(async (req, res) => {
    const path = (req.url ?? '').split('?')[0]!;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (req.url?.startsWith('/interaction/')) {
      try {
        const details = await provider.interactionDetails(req, res);
        const account = next!;
        accounts.set(account.sub, account);
        const grant = new provider.Grant({ accountId: account.sub, clientId: details.params.client_id });
        grant.addOIDCScope('openid email profile');
        const grantId = await grant.save();
        await provider.interactionFinished(req, res, { login: { accountId: account.sub }, consent: { grantId } }, { mergeWithLastSubmission: false });
      } catch (err) {
        res.writeHead(500).end(String(err));
      }
      return;
    }
    provider.callback()(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const build = () => {
    provider = new Provider(issuer, {
      clients,
      jwks: { keys: [jwk] },
      cookies: { keys: ['test-cookie-key-0123456789'] },
      findAccount: async (_ctx: unknown, sub: string) => {
        const account = accounts.get(sub);
        return account && { accountId: sub, claims: async () => ({ ...account }) };
      },
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
      // id_tokens carry the claims themselves (not only the userinfo endpoint).
      conformIdTokenClaims: false,
      pkce: { required: () => true },
      features: { devInteractions: { enabled: false } },
      interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    });
    provider.use(async (ctx: { path: string; body: unknown }, next: () => Promise<void>) => {
      await next();
      if (ctx.path === '/token' && tokenRewrite && ctx.body && typeof ctx.body === 'object') ctx.body = tokenRewrite(ctx.body as Record<string, unknown>);
    });
  };
  build();

  return {
    issuer,
    signInAs: (account) => (next = account),
    hits: (path) => hits.get(path) ?? 0,
    rewriteTokenResponse: (rewrite) => (tokenRewrite = rewrite),
    addClient: (client_id, client_secret, redirect_uris) => {
      clients.push({ client_id, client_secret, redirect_uris, grant_types: ['authorization_code'], response_types: ['code'] });
      // Static clients are read when the provider is made.
      build();
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Follows a browser's redirects from `url` through the provider (keeping its cookies) until one
 * leaves for `stopAt`: that Location is answered, not fetched.
 */
export async function followToApp(url: string, stopAt: string): Promise<string> {
  const cookies = new Map<string, string>();
  let location = url;
  for (let hop = 0; hop < 20; hop++) {
    if (location.startsWith(stopAt)) return location;
    const res = await fetch(location, {
      redirect: 'manual',
      headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
    const next = res.headers.get('location');
    if (!next) throw new Error(`the provider answered ${res.status} without a redirect: ${(await res.text()).slice(0, 300)}`);
    location = new URL(next, location).toString();
  }
  throw new Error('too many redirects');
}
