// Courses: the catalogue, course state, sections and modules.
export { coursesRouter } from './routes';
