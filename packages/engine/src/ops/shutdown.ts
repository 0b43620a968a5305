/**
 * SIGTERM/SIGINT for a service's `main.ts`: log, run `close` (each service drains in its own
 * order), exit 0; past `timeoutMs`, exit 1 anyway so the orchestrator's grace period is
 * never the one that kills us.
 */

import type { Logger } from 'pino';

export function drainOnSignal(logger: Logger, timeoutMs: number, close: () => Promise<void>): void {
  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining');
    const timer = setTimeout(() => {
      logger.error({ timeoutMs }, 'drain timed out; exiting');
      process.exit(1);
    }, timeoutMs);
    timer.unref();
    try {
      await close();
    } catch (err) {
      logger.error({ err }, 'drain failed');
      process.exit(1);
    }
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}
