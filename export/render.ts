// Rendering an export: the files of formats.ts, and the HTML page a PDF is printed from. Small
// bodies are rendered on the event loop; larger ones in the server's worker threads
// (src/lib/worker-pool.ts), since rendering them would stall every request and live editor meanwhile
// (bench/RESULTS.md, "Export"). This module is also the threads' task.
import type { WorkerPool } from '../src/lib/worker-pool';
import { exportDocument, type ExportFile, type ExportFormat, type ExportSource } from './formats';
import { documentPage } from './markdown';

const TASK = new URL('./render.ts', import.meta.url);

/**
 * Markdown (characters) rendered on the event loop, per format, beyond which a worker renders it
 * (bench/export.ts); Word's is larger, since a worker's hand-over would only add to its fixed cost.
 */
const INLINE_MAX: Record<ExportFormat | 'page', number> = {
  markdown: Infinity,
  json: Infinity,
  html: 96 * 1024,
  page: 96 * 1024,
  txt: 96 * 1024,
  docx: 12 * 1024,
};

type FileTask = { kind: 'file'; source: ExportSource; format: ExportFormat };
type PageTask = { kind: 'page'; title: string; markdown: string };
type RenderTask = FileTask | PageTask;

/** The worker threads' task, and the event loop's for small bodies: the one place a task meets its renderer. */
export default function render(task: FileTask): Promise<ExportFile>;
export default function render(task: PageTask): string;
export default function render(task: RenderTask): Promise<ExportFile> | string {
  return task.kind === 'file' ? exportDocument(task.source, task.format) : documentPage(task.title, task.markdown);
}

/** The document as a file of `format`. */
export function renderFile(workers: WorkerPool, source: ExportSource, format: ExportFormat): Promise<ExportFile> {
  const task: FileTask = { kind: 'file', source, format };
  if (source.markdown.length <= INLINE_MAX[format]) return render(task);
  return workers.run<ExportFile>(TASK, task);
}

/** The standalone HTML page of the document, as a PDF is printed from it. */
export async function renderPage(workers: WorkerPool, title: string, markdown: string): Promise<string> {
  const task: PageTask = { kind: 'page', title, markdown };
  if (markdown.length <= INLINE_MAX.page) return render(task);
  return workers.run<string>(TASK, task);
}
