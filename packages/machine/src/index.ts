/** `@baton/machine`: the call machine, pure (no I/O, no timers), exported so that tools can draw it. */
export {
  type CallMachine,
  type CallMachineContext,
  type CallMachineEvent,
  type CallMachineInput,
  callMachine,
} from './call-machine.js';
