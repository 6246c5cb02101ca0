// Enrollments: who takes or teaches which course, in which role and status.
import type { Area } from '../context';
import { permissions } from './policy';
import { enrollmentsRouter } from './routes';

export const enrollmentsArea: Area = { router: enrollmentsRouter, permissions, scope: { name: 'enrollments', description: 'enrollments and enrolment requests' } };
