// Preloaded into a server (`node --import`): SIGUSR2 holds its event loop for the given time, as a
// synchronous tool, a long GC pause or a starved core would, and says so on stdout when it does.
const STALL_MS = Number(process.env.STALL_MS ?? 1500);

process.on('SIGUSR2', () => {
  process.stdout.write('stalling\n');
  const until = Date.now() + STALL_MS;
  while (Date.now() < until) {
    // Busy on purpose: nothing else runs until the time is up.
  }
});
