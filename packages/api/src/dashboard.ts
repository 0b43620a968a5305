/**
 * The operator dashboard at `/dashboard/`: the static files `@sluice/dashboard` builds (at
 * `npm install`; never committed), served as they are. The page calls the v1 API with the
 * token the operator types, so these routes need none. Hashed assets are cached for good;
 * `index.html` is revalidated, so a new build shows on the next load. Nothing is fetched
 * from anywhere else: the content security policy says so.
 */

import fastifyStatic from '@fastify/static';
import { dashboardBuilt, dashboardDir } from '@sluice/dashboard';
import type { FastifyReply } from 'fastify';
import type { App } from './context.ts';

const CSP = [
  "default-src 'self'",
  "img-src 'self' data:",
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

function secure(reply: FastifyReply): void {
  reply.header('content-security-policy', CSP);
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'no-referrer');
}

const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>Sluice dashboard</title>
<p>The dashboard is not built. Run <code>npm install</code> (or <code>npm run build -w @sluice/dashboard</code>)
at the repository's root, then reload.</p>`;

export async function dashboardRoutes(app: App): Promise<void> {
  const hidden = { schema: { hide: true } };
  app.get('/dashboard', hidden, async (_request, reply) => reply.redirect('/dashboard/'));
  if (!dashboardBuilt()) {
    app.get('/dashboard/*', hidden, async (_request, reply) => {
      secure(reply);
      return reply.status(503).type('text/html; charset=utf-8').send(NOT_BUILT);
    });
    return;
  }
  await app.register(fastifyStatic, {
    root: dashboardDir,
    prefix: '/dashboard/',
    schemaHide: true,
    cacheControl: false,
    setHeaders: (reply, path) => {
      secure(reply);
      reply.header(
        'cache-control',
        path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
      );
    },
  });
}
