// Ending a user's sessions: every refresh token they hold is revoked (a password change, a reset,
// a deletion). Access tokens are refused through users.tokens_valid_after, set by the same write.
import { and, eq, isNull } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { refreshTokens } from '../../db/schema';

export function revokeRefreshTokensOf(tx: Db, userId: string, now: string): void {
  tx.update(refreshTokens)
    .set({ revokedAt: now })
    .where(and(eq(refreshTokens.userId, userId), isNull(refreshTokens.revokedAt)))
    .run();
}
