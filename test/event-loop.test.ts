// yieldToEventLoop: the work after it runs once due timers and polled I/O have had their turn,
// also when it is called from an I/O callback (a request's handler), where setImmediate alone
// would run before them. yieldForIo: I/O that completed meanwhile goes first, with no timer.
import { readFile } from 'node:fs';
import { MessageChannel } from 'node:worker_threads';
import { setImmediate as immediate } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { yieldForIo, yieldToEventLoop } from '../src/lib/event-loop';

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

/** Runs `yielder` from an I/O callback, after posting a message (I/O for the loop's next poll); the order things ran in. */
function orderWithMessage(yielder: () => Promise<unknown>): Promise<string[]> {
  return new Promise((done) => {
    readFile(import.meta.filename, () => {
      const order: string[] = [];
      const { port1, port2 } = new MessageChannel();
      port2.once('message', () => order.push('message'));
      port1.postMessage('a request came in');
      void yielder().then(() => {
        order.push('after the yield');
        setTimeout(() => {
          port1.close();
          done(order);
        }, 5);
      });
    });
  });
}

it('lets I/O that came in meanwhile go first, without waiting for a timer, where setImmediate does not', async () => {
  expect(await orderWithMessage(yieldForIo)).toEqual(['message', 'after the yield']);
  expect(await orderWithMessage(() => immediate())).toEqual(['after the yield', 'message']);
});
