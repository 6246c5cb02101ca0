// Compliance: seat-time sessions on a course's modules and activities, the time credited to each
// learner (service.ts states the rules), the gate that makes completion wait for it, and the
// reports an auditor reads. The activities area imports this folder for the gate, never the reverse.
import type { Area } from '../context';
import { permissions } from './policy';
import { complianceRouter } from './routes';

export const complianceArea: Area = { router: complianceRouter, permissions, scope: { name: 'compliance', description: 'seat time: sessions, block status and course reports' } };
