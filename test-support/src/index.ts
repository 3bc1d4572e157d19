export { MAIN, type ServerProcess, type ServerStart, startServer } from './server-process.js';
