// The tool of the pull-delivery crash test, shared by the process that dies and the one after it.
import { defineTool } from '@baton/contracts';

/** `research`: a background tool that ends at once, its result `<topic>: found`. */
export const loopTools = () => [
  defineTool({
    name: 'research',
    description: 'Researches a topic',
    input: { type: 'object', properties: { topic: { type: 'string' } }, required: ['topic'] },
    execution: { mode: 'background' },
    execute: ({ topic }) => `${topic}: found`,
  }),
];
