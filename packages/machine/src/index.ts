/**
 * `@baton/machine`: the call machine, pure (no I/O, no timers). `callMachine` is the definition
 * (draw it, inspect it); `compiledCallLogic` is the same machine as lean actor logic, which the
 * runtime runs one actor per call.
 */
export {
  type CallMachine,
  type CallMachineContext,
  type CallMachineEvent,
  type CallMachineInput,
  callMachine,
} from './call-machine.js';
export {
  type CallState,
  type CompiledCallLogic,
  compiledCallLogic,
  initialCallState,
  nextCallState,
} from './compiled-call-logic.js';
export { type MachineGraph, machineGraph } from './machine-graph.js';
