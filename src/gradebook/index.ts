// Gradebook: assignments, grades, categories, settings, statistics and CSV export of a course offering.
export { gradebookRouter } from './routes';
