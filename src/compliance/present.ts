// Seat-time rows → public JSON (snake_case, ISO timestamps, seconds).
import { iso } from '../lib/time';
import type { SeatSessionRow, SeatTimeStatus } from './service';

export function presentSession(s: SeatSessionRow) {
  const active = s.endedAtMs === null;
  return {
    id: s.id,
    user_id: s.userId,
    course_id: s.courseId,
    block_id: s.blockId,
    block_type: s.blockType,
    started_at: iso(s.startedAtMs),
    last_heartbeat_at: iso(s.lastHeartbeatAtMs),
    ended_at: s.endedAtMs === null ? null : iso(s.endedAtMs),
    end_reason: s.endReason,
    active,
    heartbeats: s.heartbeats,
    idle_timeout_seconds: s.idleTimeoutMs / 1000,
    expires_at: active ? iso(s.lastHeartbeatAtMs + s.idleTimeoutMs) : null,
    credited_seconds: s.creditedMs / 1000,
    duration_seconds: ((s.endedAtMs ?? s.lastHeartbeatAtMs) - s.startedAtMs) / 1000,
  };
}

export const presentFigures = (f: SeatTimeStatus) => ({
  required_seconds: f.requiredSeconds,
  credited_seconds: f.creditedSeconds,
  remaining_seconds: f.remainingSeconds,
  compliant: f.compliant,
});
