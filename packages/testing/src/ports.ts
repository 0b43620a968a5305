/** Loopback ports for the private servers: each asks the OS, so no two runs clash. */

import { createServer } from 'node:net';

/** Listens on 127.0.0.1:`port` (0: one the OS picks) and closes again: the port, or null if taken. */
export function listenOnce(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(null));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address !== null ? address.port : null;
      server.close(() => resolve(bound));
    });
  });
}
