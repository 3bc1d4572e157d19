export { MAIN, type ServerProcess, type ServerStart, startServer } from './server-process.js';
export { CLI, startWorker, type WorkerProcess } from './worker-process.js';
