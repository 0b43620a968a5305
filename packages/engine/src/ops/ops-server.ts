/**
 * `/healthz`, `/readyz` and `/metrics` for the processes that serve no API (the rate
 * limiter and the delivery worker). node:http is enough for three routes. Once the process
 * drains (`draining()`, at SIGTERM), `/readyz` answers 503: it is going away, and metrics
 * stay available until it is gone.
 */

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface OpsServer {
  url: string;
  /** From now on `/readyz` answers 503 `draining`. */
  draining(): void;
  close(): Promise<void>;
}

export async function startOpsServer(options: {
  host: string;
  port: number;
  registry: Registry;
  /** Throws when a dependency is unreachable. */
  ready: () => Promise<void>;
}): Promise<OpsServer> {
  let draining = false;
  const server: Server = createServer((req, res) => {
    const send = (status: number, body: string, type = 'application/json'): void => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET') return send(405, '{"error":{"code":"method_not_allowed"}}');
    if (path === '/healthz') return send(200, '{"status":"ok"}');
    if (path === '/readyz') {
      if (draining) return send(503, '{"status":"draining"}');
      options.ready().then(
        () => send(200, '{"status":"ready"}'),
        () => send(503, '{"status":"unavailable"}'),
      );
      return;
    }
    if (path === '/metrics') {
      options.registry.metrics().then(
        (text) => send(200, text, options.registry.contentType),
        () => send(500, '{"error":{"code":"internal"}}'),
      );
      return;
    }
    send(404, '{"error":{"code":"not_found"}}');
  });
  await new Promise<void>((resolve) => server.listen(options.port, options.host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host}:${port}`,
    draining: () => {
      draining = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
