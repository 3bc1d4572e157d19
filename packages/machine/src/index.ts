/**
 * `@baton/machine`: the call machine, pure (no I/O, no timers). `callMachine` is the definition
 * (draw it, inspect it); `nextCallStep` is the same machine compiled, whose steps carry the
 * machine's named actions: the runtime steps each call with it. `compiledCallLogic` wraps it as
 * XState actor logic, for an actor of one's own.
 */
export {
  type CallAction,
  type CallActionType,
  type CallMachine,
  type CallMachineContext,
  type CallMachineEvent,
  type CallMachineEventType,
  type CallMachineInput,
  type CallTimer,
  callMachine,
} from './call-machine.js';
export {
  type CallPath,
  type CallState,
  type CallStep,
  type CompiledCallLogic,
  callState,
  callStateOf,
  compiledCallLogic,
  initialCallState,
  nextCallState,
  nextCallStep,
  snapshotOf,
} from './compiled-call-logic.js';
export { type MachineGraph, machineGraph } from './machine-graph.js';
