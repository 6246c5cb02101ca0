// System: health, version and the features this server has.
export { systemRouter } from './routes';
