/**
 * The HTTP API (docs/api.md), the same in both shapes: fastify with zod schemas
 * (fastify-type-provider-zod) that validate the input, type the handlers, serialize the
 * output and generate `/openapi.json` (@fastify/swagger); errors as
 * `{error: {code, message, details}}`; plus `/healthz`, `/readyz`, `/metrics` and the
 * operator dashboard at `/dashboard/`.
 */

import { maxHeaderSize } from 'node:http';
import fastifySwagger from '@fastify/swagger';
import { Transforms } from '@sluice/engine';
import Fastify, { type FastifyBaseLogger, LogController } from 'fastify';
import {
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import { Counter } from 'prom-client';
import { Authenticator } from './auth.ts';
import { clientErrorHandler } from './client-error.ts';
import type { ApiContext, ApiOptions, App } from './context.ts';
import { dashboardRoutes } from './dashboard.ts';
import { ApiError, errorHandler, RETRY_AFTER_SECONDS } from './errors.ts';
import { EventCatalog } from './event-catalog.ts';
import { parseJsonBody } from './json-body.ts';
import { Quotas } from './quota.ts';
import { alertRoutes } from './routes/alerts.ts';
import { deliveryRoutes } from './routes/deliveries.ts';
import { destinationActionRoutes } from './routes/destination-actions.ts';
import { destinationRoutes } from './routes/destinations.ts';
import { eventLogRoutes } from './routes/event-log.ts';
import { eventTypeRoutes } from './routes/event-types.ts';
import { eventRoutes } from './routes/events.ts';
import { opsRoutes } from './routes/ops.ts';
import { overviewRoutes } from './routes/overview.ts';
import { portalLinkRoutes } from './routes/portal-links.ts';
import { previewRoutes } from './routes/preview.ts';
import { tenantKeyRoutes } from './routes/tenant-keys.ts';
import { tenantRoutes } from './routes/tenants.ts';
import { testEventRoutes } from './routes/test-event.ts';
import { whoamiRoutes } from './routes/whoami.ts';
import { operationalWebhooks } from './webhooks.ts';

export async function buildApi(options: ApiOptions): Promise<App> {
  const unavailable = unavailableCounter(options.registry);
  const handleError = errorHandler(() => unavailable.inc());
  const app = Fastify({
    loggerInstance: options.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.config.maxRequestBytes,
    // Draining is answered below, in the API's error format (fastify's own 503 body is not).
    return503OnClosing: false,
    clientErrorHandler,
    // A path parameter is checked by its route's schema, after authentication, like any other
    // input: an id of any length is then a 400 `validation_failed` naming it. The router's own
    // limit (100 characters by default, which guards regular-expression parameters; the API
    // has none) would answer before both; at Node's header limit, which bounds the request
    // line, it never does for a request that reached the server.
    routerOptions: { maxParamLength: maxHeaderSize },
    // What the router refuses before a route is found (a path that is not valid
    // percent-encoding), in the API's error format rather than fastify's own body.
    frameworkErrors: (err, request, reply) => handleError(err, request, reply),
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(handleError);
  // JSON only: a text/plain body would otherwise reach the schema as a string.
  app.removeContentTypeParser('text/plain');
  // Valid UTF-8 and Unicode only, numbers kept as posted (json-body.ts).
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    try {
      done(null, parseJsonBody(request, body as Buffer));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  app.setNotFoundHandler((request) => {
    throw new ApiError(404, 'not_found', `no route ${request.method} ${request.url.split('?')[0]}`);
  });

  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Sluice API',
        version: options.version ?? '1',
        description: 'Rate-limited outbound webhooks. Errors: {"error": {"code", "message", "details"}}.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      // A 3.1 webhooks map; @fastify/swagger types `openapi` as a union of 3.0, 3.1 and 3.2
      // documents whose schema objects do not agree with each other, so it is passed untyped.
      webhooks: operationalWebhooks() as never,
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
  });

  // While `close` drains the requests in flight, one that still arrives (on a connection
  // kept alive, or pipelined) is refused at once: the load balancer sends it elsewhere.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (_request, reply) => {
    if (!closing) return;
    void reply.header('connection', 'close');
    throw new ApiError(503, 'unavailable', 'this instance is shutting down; retry', {
      retryAfterSeconds: RETRY_AFTER_SECONDS,
    });
  });

  const clock = options.clock ?? Date.now;
  const auth = new Authenticator(options.adminToken, options.store, clock);
  app.addHook('onRequest', auth.hook);
  const ctx: ApiContext = {
    store: options.store,
    dispatcher: options.dispatcher,
    auth,
    config: options.config,
    clock,
    quotas: new Quotas(options.store, options.quotas, options.registry, clock),
    catalog: new EventCatalog(options.store, { strict: options.config.eventTypesStrict ?? false, clock }),
    transforms: options.transforms ?? ownTransforms(app, options.config.maxPayloadBytes),
  };
  opsRoutes(app, options);
  tenantRoutes(app, ctx);
  tenantKeyRoutes(app, ctx);
  destinationRoutes(app, ctx);
  destinationActionRoutes(app, ctx);
  overviewRoutes(app, ctx);
  eventRoutes(app, ctx);
  eventTypeRoutes(app, ctx);
  eventLogRoutes(app, ctx);
  deliveryRoutes(app, ctx);
  alertRoutes(app, ctx);
  whoamiRoutes(app, ctx);
  portalLinkRoutes(app, ctx);
  testEventRoutes(app, ctx);
  previewRoutes(app, ctx);
  await dashboardRoutes(app, options.config.portalFrameAncestors);
  return app;
}

/** The API's own sandbox, with the default limits (no thread starts before a call), closed with it. */
function ownTransforms(app: App, maxPayloadBytes: number): Transforms {
  const transforms = new Transforms({
    threads: 1,
    timeoutMs: 50,
    memoryBytes: 16 * 1024 * 1024,
    maxPayloadBytes,
  });
  app.addHook('onClose', () => transforms.close());
  return transforms;
}

const UNAVAILABLE = 'sluice_api_unavailable_total';

/** The 503s answered because a dependency could not (one per registry, however many APIs share it). */
function unavailableCounter(registry: ApiOptions['registry']): Counter {
  const existing = registry.getSingleMetric(UNAVAILABLE);
  if (existing instanceof Counter) return existing;
  return new Counter({
    name: UNAVAILABLE,
    help: 'Requests answered 503 unavailable: the store or Redis could not answer (an outage, a full disk).',
    registers: [registry],
  });
}
