import type { ApiOptions, App } from '../context.ts';

/**
 * The registry's metrics in the text format, each on its own: a gauge that reads the store
 * fails while the store is down, and is left out rather than failing the scrape (an outage
 * is when `sluice_api_unavailable_total` and the rest matter most).
 */
async function exposition(options: ApiOptions): Promise<string> {
  const { registry, logger } = options;
  const parts = await Promise.all(
    registry.getMetricsAsArray().map((metric) =>
      registry.getSingleMetricAsString(metric.name).catch((err: unknown) => {
        logger.warn({ err, metric: metric.name }, 'a metric could not be read; left out of this scrape');
        return undefined;
      }),
    ),
  );
  return `${parts.filter((p) => p !== undefined).join('\n\n')}\n`;
}

/** Health, readiness, metrics and the OpenAPI document: no token needed. */
export function opsRoutes(app: App, options: ApiOptions): void {
  const hidden = { hide: true, security: [] };
  app.get('/healthz', { schema: { ...hidden, summary: 'Alive' } }, async () => ({ status: 'ok' }));
  app.get(
    '/readyz',
    { schema: { ...hidden, summary: 'Dependencies reachable' } },
    async (_request, reply) => {
      try {
        await (options.ready ?? (() => options.store.ping()))();
        return { status: 'ready' };
      } catch (err) {
        options.logger.warn({ err }, 'not ready');
        return reply.status(503).send({ status: 'unavailable' });
      }
    },
  );
  app.get('/metrics', { schema: { ...hidden, summary: 'Prometheus metrics' } }, async (_request, reply) =>
    reply.header('content-type', options.registry.contentType).send(await exposition(options)),
  );
  app.get('/openapi.json', { schema: { ...hidden, summary: 'This document' } }, async () => app.swagger());
}
