/**
 * The operator dashboard at `/dashboard/`: the static files `@sluice/dashboard` builds (at
 * `npm install`; never committed), served as they are. The page calls the v1 API with the
 * token the operator types, so these routes need none. Hashed assets are cached for good;
 * `index.html` is revalidated, so a new build shows on the next load. Nothing is fetched
 * from anywhere else: the content security policy says so, and no page may frame it. Its
 * icon is also the site's `/favicon.ico`.
 *
 * The portal (`/portal/`, and `/portal/*` for deep links; docs/api.md "Portal links") is the
 * same bundle's `index.html` (its assets stay under `/dashboard/assets/`), which knows it is
 * the portal by its path and signs in with the link's token from the URL's fragment. It is
 * made to be framed by the platform's own pages: `frame-ancestors` is the operator's
 * `SLUICE_PORTAL_FRAME_ANCESTORS` (default `'self'`), and images may come from https: and
 * data: URLs (a link's branding logo, loaded by the viewer's browser, never by Sluice).
 */

import { readFile } from 'node:fs/promises';
import fastifyStatic from '@fastify/static';
import { dashboardBuilt, dashboardDir } from '@sluice/dashboard';
import type { FastifyReply } from 'fastify';
import type { App } from './context.ts';

const policy = (images: string, frameAncestors: string) =>
  [
    "default-src 'self'",
    `img-src ${images}`,
    "style-src 'self' 'unsafe-inline'",
    "connect-src 'self'",
    `frame-ancestors ${frameAncestors}`,
    "base-uri 'none'",
    "form-action 'self'",
  ].join('; ');

const CSP = policy("'self' data:", "'none'");

/** The portal's logo may be any https: or data: image, or one on a loopback address (as `logoUrl` allows). */
const PORTAL_IMAGES = "'self' data: https: http://127.0.0.1:* http://localhost:*";

function secure(reply: FastifyReply, csp = CSP): void {
  reply.header('content-security-policy', csp);
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'no-referrer');
}

const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>Sluice dashboard</title>
<p>The dashboard is not built. Run <code>npm install</code> (or <code>npm run build -w @sluice/dashboard</code>)
at the repository's root, then reload.</p>`;

export async function dashboardRoutes(app: App, portalFrameAncestors = "'self'"): Promise<void> {
  const hidden = { schema: { hide: true } };
  app.get('/dashboard', hidden, async (_request, reply) => reply.redirect('/dashboard/'));
  app.get('/portal', hidden, async (_request, reply) => reply.redirect('/portal/'));
  const portalCsp = policy(PORTAL_IMAGES, portalFrameAncestors);
  const portal = async (_request: unknown, reply: FastifyReply) => {
    secure(reply, portalCsp);
    if (!dashboardBuilt()) return reply.status(503).type('text/html; charset=utf-8').send(NOT_BUILT);
    reply.header('cache-control', 'no-cache');
    return reply.type('text/html; charset=utf-8').send(await readFile(`${dashboardDir}index.html`, 'utf8'));
  };
  app.get('/portal/', hidden, portal);
  app.get('/portal/*', hidden, portal);
  if (!dashboardBuilt()) {
    app.get('/dashboard/*', hidden, async (_request, reply) => {
      secure(reply);
      return reply.status(503).type('text/html; charset=utf-8').send(NOT_BUILT);
    });
    return;
  }
  // The page links its icon (`/dashboard/favicon.svg`); a browser that asks the site's root
  // for one gets the same, not a 404.
  app.get('/favicon.ico', hidden, async (_request, reply) => {
    secure(reply);
    reply.header('cache-control', 'public, max-age=86400');
    return reply.type('image/svg+xml').send(await readFile(`${dashboardDir}favicon.svg`));
  });
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
