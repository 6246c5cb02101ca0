// Course files: the PDFs, images and slides of a course, stored once by content under
// DATA_DIR/files/ and served only to the course's members.
import type { Area } from '../context';
import { uploadBody } from '../http/body-rules';
import { filesRouter } from './routes';

export const filesArea: Area = {
  scope: { name: 'files', description: 'course files' },
  router: filesRouter,
  bodies: (config) => [uploadBody('POST', /^\/api\/courses\/[^/]+\/files\/?$/, config.fileMaxBytes)],
};
