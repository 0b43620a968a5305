import type { ApiOptions, App } from '../context.ts';

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
    reply.header('content-type', options.registry.contentType).send(await options.registry.metrics()),
  );
  app.get('/openapi.json', { schema: { ...hidden, summary: 'This document' } }, async () => app.swagger());
}
