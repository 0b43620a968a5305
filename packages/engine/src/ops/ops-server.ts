/**
 * `/healthz`, `/readyz` and `/metrics` for the processes that serve no API (the rate
 * limiter and the delivery worker). node:http is enough for three routes. Once the process
 * drains (`draining()`, at SIGTERM), `/readyz` answers 503: it is going away, and metrics
 * stay available until it is gone. `/metrics` answers 200 while the store or Redis does not
 * (scrape.ts); `/healthz` 200 while the process lives; `/readyz` 503 while a dependency is
 * unreachable.
 */

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { notReadyReason } from '@sluice/store';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { exposition, scrapeAllowed } from './scrape.ts';

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
  /** Hears of a metric left out of a scrape. */
  logger?: Pick<Logger, 'warn'> | undefined;
  /** Throws when a dependency is unreachable. */
  ready: () => Promise<void>;
  /** `SLUICE_METRICS_TOKEN`: `/metrics` only with `authorization: Bearer <it>`. */
  metricsToken?: string | undefined;
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
        (err: unknown) => send(503, JSON.stringify({ status: 'unavailable', reason: notReadyReason(err) })),
      );
      return;
    }
    if (path === '/metrics') {
      if (!scrapeAllowed(req.headers.authorization, options.metricsToken))
        return send(401, '{"error":{"code":"unauthorized","message":"/metrics needs its bearer token"}}');
      const failed = (metric: string, err: unknown) =>
        options.logger?.warn({ err, metric }, 'a metric could not be read; left out of this scrape');
      void exposition(options.registry, failed).then((text) => send(200, text, options.registry.contentType));
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
