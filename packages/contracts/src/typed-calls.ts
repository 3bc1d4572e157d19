import type { CallReply, ReplyStatus } from './call.js';
import type { AnyTool, ToolArgs, ToolOutput } from './define-tool.js';

/**
 * A call request of the shape `R` narrowed to the tools `T`: by a name one of them has, with that
 * tool's arguments. Tools whose names are plain strings (a registry) take any request.
 */
export type ToolCallOf<
  T extends AnyTool,
  R extends { name: string; args?: unknown },
> = string extends T['name']
  ? R
  : {
      [N in T['name']]: Omit<R, 'name' | 'args'> & {
        name: N;
        args?: ToolArgs<Extract<T, { name: N }>>;
      };
    }[T['name']];

/** The reply to a call of tool `N` of `T`: a success has that tool's output. */
export type ToolCallReply<T extends AnyTool, N extends string> = string extends T['name']
  ? CallReply
  :
      | (Omit<CallReply, 'status' | 'output'> & {
          status: 'succeeded';
          output: ToolOutput<Extract<T, { name: N }>>;
        })
      | (Omit<CallReply, 'status'> & { status: Exclude<ReplyStatus, 'succeeded'> });
