// System: health, version and the features this server has.
import type { Area } from '../context';
import { systemRouter } from './routes';

export const systemArea: Area = { router: systemRouter, scope: 'none' };
