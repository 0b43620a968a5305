import { exposition, scrapeAllowed } from '@sluice/engine';
import { notReadyReason } from '@sluice/store';
import { ApiError, type ApiOptions, type App } from '../context.ts';

/** Health, readiness, metrics and the OpenAPI document: no token needed (metrics: unless SLUICE_METRICS_TOKEN). */
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
        return reply.status(503).send({ status: 'unavailable', reason: notReadyReason(err) });
      }
    },
  );
  // Answers while the store does not (an outage is when `sluice_api_unavailable_total` and the
  // rest matter most): a gauge whose read fails keeps its last value (@sluice/engine scrape.ts).
  app.get('/metrics', { schema: { ...hidden, summary: 'Prometheus metrics' } }, async (request, reply) => {
    if (!scrapeAllowed(request.headers.authorization, options.config.metricsToken))
      throw new ApiError(401, 'unauthorized', '/metrics needs its bearer token (SLUICE_METRICS_TOKEN)');
    const failed = (metric: string, err: unknown) =>
      options.logger.warn({ err, metric }, 'a metric could not be read; left out of this scrape');
    return reply
      .header('content-type', options.registry.contentType)
      .send(await exposition(options.registry, failed));
  });
  app.get('/openapi.json', { schema: { ...hidden, summary: 'This document' } }, async () => app.swagger());
}
