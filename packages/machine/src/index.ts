/** `@baton/machine`: the call machine, pure (no I/O, no timers), exported so that tools can draw it. */
export { callMachine, type CallMachine, type CallMachineContext, type CallMachineEvent, type CallMachineInput } from './call-machine.js';
