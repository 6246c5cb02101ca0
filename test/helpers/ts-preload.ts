// A preload only a TypeScript-aware loader can run (`node --import tsx --import ./ts-preload.ts`),
// like the benchmark's memory probe: a worker thread that inherited it could not start.
export const preloaded: boolean = true;
