/**
 * A change that lowers a destination's limit is answered only once no request started under
 * the old limit can still arrive (docs/adr/0012), so every window that begins after the answer
 * holds the new limit. Both shapes wait the same way; each says how it knows (the single box
 * from its send windows, the distributed API from the `sends` entries in Redis).
 */

import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';

/** How often the wait looks again. */
const POLL_MS = 10;

export interface OldLimitWait {
  destinationId: string;
  /** Whether a request started under the old limit may still arrive. */
  mayStillArrive: () => boolean | Promise<boolean>;
  /** At most this long (counted in polls: a test's clock may stand still); then it is logged. */
  maxWaitMs: number;
  logger: Logger;
}

export async function untilOldLimitArrived(wait: OldLimitWait): Promise<void> {
  for (let waited = 0; await wait.mayStillArrive(); waited += POLL_MS) {
    if (waited >= wait.maxWaitMs) {
      wait.logger.info(
        { destinationId: wait.destinationId, maxWaitMs: wait.maxWaitMs },
        'a request started under the old limit may still arrive after the change is answered',
      );
      return;
    }
    await sleep(POLL_MS);
  }
}
