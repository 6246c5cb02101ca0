// Resolves a credential (access JWT or API key) to the calling user, for REST and WebSocket alike.
//
// The hot path is cheap: a JWT's signature is checked once and its claims cached until it
// expires; the user row behind a credential is cached too. Revocation is still seen at once:
// every revoking write (user deleted or demoted, key deleted) and every other write to a user
// calls `narrowed()` (see AccessChanges in access.ts), which bumps an in-process epoch, and a
// cached entry from an older epoch is re-read from the database.
import { and, eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { apiKeys, users } from '../../db/schema';
import { BoundedMap } from '../lib/bounded-map';
import type { Clock } from '../lib/clock';
import { looksLikeApiKey, sha256 } from './secrets';
import { issuedAtMs, type TokenSigner } from './tokens';

export type TenantRole = 'admin' | 'member';

/**
 * The caller of a request or a live connection. Never changed once built: one actor is shared by
 * every request and connection that presents an access token of the same user (see actorOf).
 */
export interface Actor {
  readonly userId: string;
  readonly tenantId: string;
  readonly role: TenantRole;
  readonly isPlatformAdmin: boolean;
  readonly email: string;
  readonly name: string;
  /** How the caller proved who they are. */
  readonly via: 'jwt' | 'api_key';
  /** The API key behind the credential: the key itself, or an access token obtained with it. */
  readonly apiKeyId?: string;
  /**
   * The scopes of that key when it does not hold them all (src/auth/scopes.ts); null: no key, or a
   * key with every scope. The key acts as its creator, narrowed to these.
   */
  readonly scopes: readonly string[] | null;
  /** The only courses that key reaches; null: every course its creator reaches. */
  readonly courseIds: readonly string[] | null;
}

/** What an API key narrows its creator's rights to. */
interface KeyLimits {
  scopes: readonly string[] | null;
  courseIds: readonly string[] | null;
}

const NO_LIMITS: KeyLimits = { scopes: null, courseIds: null };

/** A key row's limits: `*` among its scopes is no scope limit. */
const limitsOf = (row: { scopes: string[] | null; courseIds: string[] | null }): KeyLimits => ({
  scopes: row.scopes === null || row.scopes.includes('*') ? null : Object.freeze([...row.scopes]),
  courseIds: row.courseIds === null ? null : Object.freeze([...row.courseIds]),
});

interface CachedClaims {
  userId: string;
  tenantId: string;
  expiresAtMs: number;
  issuedAtMs: number;
  /** The API key the token was obtained with, if any: the token dies with the key. */
  apiKeyId?: string;
}

interface CachedKeyState {
  userId: string | null;
  expiresAtMs: number | null;
  limits: KeyLimits;
  epoch: number;
}

interface CachedKey {
  apiKeyId: string;
  userId: string;
  tenantId: string;
  expiresAtMs: number | null;
  limits: KeyLimits;
  epoch: number;
}

/** A user's public fields, as `GET /api/users/me` shows them (never the password hash). */
export type UserProfile = Pick<typeof users.$inferSelect, 'id' | 'tenantId' | 'email' | 'name' | 'role' | 'timezone' | 'createdAt' | 'updatedAt' | 'deletedAt'>;

interface CachedUser {
  /** The user as the caller of an access token not obtained with an API key (the common case). */
  actor: Actor;
  profile: UserProfile;
  /** Access tokens issued before this moment (a password change, in ms) are refused; null: none. */
  tokensValidAfterMs: number | null;
  epoch: number;
}

const LAST_USED_WRITE_INTERVAL_MS = 60_000;

/**
 * Whether the user's last password change, which signs them out everywhere, came after `atMs`.
 * Compared to the millisecond, as the change is recorded: to the second, a token issued earlier in
 * the same second as the change outlived it.
 */
const signedOutSince = (user: CachedUser, atMs: number): boolean => user.tokensValidAfterMs !== null && atMs < user.tokensValidAfterMs;

/**
 * The user's actor for a credential: the cached user's own for an access token not obtained with
 * an API key, so that the requests and open WebSockets of one user share one object (each open
 * WebSocket keeps its actor; see the Live editing section of bench/RESULTS.md).
 */
function actorOf(user: Actor, via: Actor['via'], apiKeyId: string | undefined, limits: KeyLimits = NO_LIMITS): Actor {
  return via === user.via && apiKeyId === user.apiKeyId ? user : newActor(user, via, apiKeyId, limits);
}

/**
 * Every Actor is built by this one literal, so that actors share one hidden class: spread copies
 * each got their own, larger objects that made every read of an actor megamorphic.
 */
function newActor(user: Omit<Actor, 'via' | 'apiKeyId' | 'scopes' | 'courseIds'>, via: Actor['via'], apiKeyId: string | undefined, limits: KeyLimits = NO_LIMITS): Actor {
  return {
    userId: user.userId,
    tenantId: user.tenantId,
    role: user.role,
    isPlatformAdmin: user.isPlatformAdmin,
    email: user.email,
    name: user.name,
    via,
    apiKeyId,
    scopes: limits.scopes,
    courseIds: limits.courseIds,
  };
}

export class Authenticator {
  private epoch = 0;
  private readonly claims = new BoundedMap<string, CachedClaims>(50_000);
  private readonly keys = new BoundedMap<string, CachedKey>(10_000);
  private readonly keysById = new BoundedMap<string, CachedKeyState>(10_000);
  private readonly users = new BoundedMap<string, CachedUser>(50_000);
  private readonly lastUsedWrites = new BoundedMap<string, number>(10_000);
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly db: Db,
    private readonly signer: TokenSigner,
    private readonly clock: Clock,
  ) {}

  /** Called after any write that takes access away; cached credentials are re-checked at once. */
  narrowed(): void {
    this.epoch += 1;
    for (const listener of this.listeners) listener();
  }

  /**
   * Called after a write that gives access (a grant added or raised, a group joined): no credential
   * changes, but live connections re-decide at once, so that a viewer made editor can edit now.
   */
  widened(): void {
    for (const listener of this.listeners) listener();
  }

  /** Long-lived connections (WebSockets) re-check their caller when access may have changed. */
  onAccessChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Not an async function itself: an async function returning fromJwt's promise wraps it in a
   * second one, resolved two microtasks later, on every request.
   */
  authenticate(credential: string): Promise<Actor | null> {
    if (!credential) return Promise.resolve(null);
    if (!looksLikeApiKey(credential)) return this.fromJwt(credential);
    try {
      return Promise.resolve(this.fromApiKey(credential));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * For long-lived connections: is the caller admitted earlier still a live user (and their API
   * key still there)? An access token expiring mid-session does not end it; revocation does.
   */
  recheck(actor: Actor, admittedAtMs?: number): Actor | null {
    const key = actor.apiKeyId !== undefined ? this.liveKey(actor.apiKeyId, actor.userId, this.clock.now().getTime()) : NO_LIMITS;
    if (!key) return null;
    const cached = this.cachedUser(actor.userId);
    if (!cached || cached.actor.tenantId !== actor.tenantId) return null;
    // Admitted with an access token before the user's last password change (an API key is a
    // credential of its own and goes on).
    if (actor.via === 'jwt' && admittedAtMs !== undefined && signedOutSince(cached, admittedAtMs)) return null;
    return actorOf(cached.actor, actor.via, actor.apiKeyId, key);
  }

  /** The current time in ms, as `recheck` compares a connection's admission with a password change. */
  stamp(): number {
    return this.clock.now().getTime();
  }

  private async fromJwt(token: string): Promise<Actor | null> {
    const now = this.clock.now().getTime();
    let claims = this.claims.get(token);
    if (!claims) {
      const verified = await this.signer.verify(token);
      if (!verified) return null;
      claims = { userId: verified.sub, tenantId: verified.tid, expiresAtMs: verified.exp * 1000, issuedAtMs: issuedAtMs(verified), apiKeyId: verified.akid };
      this.claims.set(token, claims);
    }
    if (claims.expiresAtMs <= now) {
      this.claims.delete(token);
      return null;
    }
    const cached = this.cachedUser(claims.userId);
    if (!cached || cached.actor.tenantId !== claims.tenantId) return null;
    if (signedOutSince(cached, claims.issuedAtMs)) return null;
    const user = cached.actor;
    if (claims.apiKeyId === undefined) return actorOf(user, 'jwt', undefined);
    const key = this.liveKey(claims.apiKeyId, claims.userId, now);
    if (!key) return null;
    this.touchKey(claims.apiKeyId, now);
    return actorOf(user, 'jwt', claims.apiKeyId, key);
  }

  /** The limits of an API key (by id) that still exists, belongs to the user and has not expired; null otherwise. */
  private liveKey(apiKeyId: string, userId: string, now: number): KeyLimits | null {
    let state = this.keysById.get(apiKeyId);
    if (!state || state.epoch !== this.epoch) {
      const row = this.db
        .select({ userId: apiKeys.userId, expiresAt: apiKeys.expiresAt, scopes: apiKeys.scopes, courseIds: apiKeys.courseIds })
        .from(apiKeys)
        .where(eq(apiKeys.id, apiKeyId))
        .get();
      state = {
        userId: row?.userId ?? null,
        expiresAtMs: row?.expiresAt ? Date.parse(row.expiresAt) : null,
        limits: row ? limitsOf(row) : NO_LIMITS,
        epoch: this.epoch,
      };
      this.keysById.set(apiKeyId, state);
    }
    return state.userId === userId && (state.expiresAtMs === null || state.expiresAtMs > now) ? state.limits : null;
  }

  private fromApiKey(key: string): Actor | null {
    // Cached by the key itself, as access tokens are: hashing it on every request cost more than
    // the rest of authentication. The database only ever sees and stores the hash.
    let cached = this.keys.get(key);
    if (!cached || cached.epoch !== this.epoch) {
      const row = this.db
        .select({ id: apiKeys.id, userId: apiKeys.userId, tenantId: apiKeys.tenantId, expiresAt: apiKeys.expiresAt, scopes: apiKeys.scopes, courseIds: apiKeys.courseIds })
        .from(apiKeys)
        .where(eq(apiKeys.keyHash, sha256(key)))
        .get();
      if (!row) {
        this.keys.delete(key);
        return null;
      }
      cached = {
        apiKeyId: row.id,
        userId: row.userId,
        tenantId: row.tenantId,
        expiresAtMs: row.expiresAt ? Date.parse(row.expiresAt) : null,
        limits: limitsOf(row),
        epoch: this.epoch,
      };
      this.keys.set(key, cached);
    }
    const now = this.clock.now().getTime();
    if (cached.expiresAtMs !== null && cached.expiresAtMs <= now) return null;
    const user = this.loadUser(cached.userId);
    if (!user || user.tenantId !== cached.tenantId) return null;
    this.touchKey(cached.apiKeyId, now);
    return actorOf(user, 'api_key', cached.apiKeyId, cached.limits);
  }

  /** `last_used_at` is kept to the minute: one write a minute per key, not one per request. */
  private touchKey(apiKeyId: string, now: number): void {
    const last = this.lastUsedWrites.get(apiKeyId);
    if (last !== undefined && now - last < LAST_USED_WRITE_INTERVAL_MS) return;
    this.lastUsedWrites.set(apiKeyId, now);
    this.db
      .update(apiKeys)
      .set({ lastUsedAt: new Date(now).toISOString() })
      .where(eq(apiKeys.id, apiKeyId))
      .run();
  }

  /**
   * A live user's profile, read with their credential and as fresh as it: every write to a user
   * bumps the epoch (the users service calls `narrowed()` after each), so this is never older than the
   * last write. Null for an unknown or deleted user.
   */
  profileOf(userId: string): UserProfile | null {
    return this.cachedUser(userId)?.profile ?? null;
  }

  private loadUser(userId: string): CachedUser['actor'] | null {
    return this.cachedUser(userId)?.actor ?? null;
  }

  private cachedUser(userId: string): CachedUser | null {
    const cached = this.users.get(userId);
    if (cached && cached.epoch === this.epoch) return cached;
    const row = this.db
      .select()
      .from(users)
      .where(and(eq(users.id, userId)))
      .get();
    if (!row || row.deletedAt) {
      this.users.delete(userId);
      return null;
    }
    const entry: CachedUser = {
      // Frozen: shared by every request and connection of the user, none may change it for the others.
      actor: Object.freeze(
        newActor(
          { userId: row.id, tenantId: row.tenantId, role: row.role, isPlatformAdmin: row.isPlatformAdmin, email: row.email, name: row.name },
          'jwt',
          undefined,
        ),
      ),
      profile: {
        id: row.id,
        tenantId: row.tenantId,
        email: row.email,
        name: row.name,
        role: row.role,
        timezone: row.timezone,
        createdAt: row.createdAt,
        updatedAt: row.updatedAt,
        deletedAt: row.deletedAt,
      },
      tokensValidAfterMs: row.tokensValidAfter ? Date.parse(row.tokensValidAfter) : null,
      epoch: this.epoch,
    };
    this.users.set(userId, entry);
    return entry;
  }
}
