/**
 * The HTTP API (API.md), the same in both shapes: fastify, zod-validated input, errors as
 * `{error: {code, message, details}}`, plus `/healthz`, `/readyz` and `/metrics`.
 */

import type { Store } from '@sluice/engine';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { Authenticator } from './auth.ts';
import type { ApiConfig, ApiContext, Dispatcher } from './context.ts';
import { ApiError, errorHandler } from './errors.ts';
import { deliveryRoutes } from './routes/deliveries.ts';
import { destinationRoutes } from './routes/destinations.ts';
import { eventRoutes } from './routes/events.ts';
import { tenantRoutes } from './routes/tenants.ts';

export interface ApiOptions {
  store: Store;
  dispatcher: Dispatcher;
  adminToken: string;
  config: ApiConfig;
  logger: Logger;
  registry: Registry;
  /** Whether every dependency is reachable (for /readyz). */
  ready?: () => Promise<void>;
  clock?: () => number;
}

export function buildApi(options: ApiOptions): FastifyInstance {
  const app = Fastify({
    loggerInstance: options.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.config.maxRequestBytes,
    return503OnClosing: true,
  });
  const ctx: ApiContext = {
    store: options.store,
    dispatcher: options.dispatcher,
    auth: new Authenticator(options.adminToken, options.store),
    config: options.config,
    clock: options.clock ?? Date.now,
  };
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((request) => {
    throw new ApiError(404, 'not_found', `no route ${request.method} ${request.url.split('?')[0]}`);
  });

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    try {
      await (options.ready ?? (() => options.store.ping()))();
      return { status: 'ready' };
    } catch (err) {
      options.logger.warn({ err }, 'not ready');
      return reply.status(503).send({ status: 'unavailable' });
    }
  });
  app.get('/metrics', async (_request, reply) => {
    return reply.header('content-type', options.registry.contentType).send(await options.registry.metrics());
  });

  tenantRoutes(app, ctx);
  destinationRoutes(app, ctx);
  eventRoutes(app, ctx);
  deliveryRoutes(app, ctx);
  return app;
}
