// yieldToEventLoop: the work after it runs once due timers and polled I/O have had their turn,
// also when it is called from an I/O callback (a request's handler), where setImmediate alone
// would run before them.
import { readFile } from 'node:fs';
import { setImmediate as immediate } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { yieldToEventLoop } from '../src/lib/event-loop';

/** Runs `yielder` from an I/O callback, after scheduling a timer that is due by then; the order things ran in. */
function orderFromIoCallback(yielder: () => Promise<unknown>): Promise<string[]> {
  return new Promise((done) => {
    readFile(import.meta.filename, () => {
      const order: string[] = [];
      setTimeout(() => order.push('timer'), 0);
      const until = performance.now() + 5;
      while (performance.now() < until);
      void yielder().then(() => {
        order.push('after the yield');
        setTimeout(() => done(order), 5);
      });
    });
  });
}

it('lets a due timer run first, even from an I/O callback, where setImmediate does not', async () => {
  expect(await orderFromIoCallback(yieldToEventLoop)).toEqual(['timer', 'after the yield']);
  expect(await orderFromIoCallback(() => immediate())).toEqual(['after the yield', 'timer']);
});
