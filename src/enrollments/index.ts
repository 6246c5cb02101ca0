// Enrollments: who takes or teaches which course, in which role and status.
export { enrollmentsRouter } from './routes';
