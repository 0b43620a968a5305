export { type DistributedProcess, openDistributedProcess } from './distributed-process.ts';
export { openStore, runService } from './run-service.ts';
