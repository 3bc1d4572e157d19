// The tools of the at-most-once test, shared by the process it kills and the one that recovers.
import { appendFileSync } from 'node:fs';
import { defineTool } from '@baton/contracts';
import { z } from 'zod';

/**
 * `hold` takes the slot a moment; `charge` is not idempotent: it writes its side effect (a line
 * with its PID) to `sideEffects`, then blocks the event loop for `blockMs`, so that nothing more
 * is written meanwhile.
 */
export function chargingTools(sideEffects, blockMs) {
  return [
    defineTool({
      name: 'hold',
      description: 'Holds the slot a moment',
      input: z.object({}),
      execute: () => new Promise((resolve) => setTimeout(() => resolve('held'), 200)),
    }),
    defineTool({
      name: 'charge',
      description: 'Charges a card: must not run twice',
      input: z.object({}),
      execution: { idempotent: false },
      execute: () => {
        appendFileSync(sideEffects, `charged by ${process.pid}\n`);
        const until = Date.now() + blockMs;
        while (Date.now() < until);
        return 'charged';
      },
    }),
  ];
}
