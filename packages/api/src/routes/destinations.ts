import {
  DEFAULT_ORDERING,
  DEFAULT_RETRY_POLICY,
  type DestinationAuth,
  type DestinationHeaders,
  type DestinationTls,
  generateSecret,
  matchesEventType,
  newId,
  tlsProblems,
} from '@sluice/core';
import { certificateNotice, checkUrlHost } from '@sluice/engine';
import type { Destination, DestinationPatch } from '@sluice/store';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { narrowedTo } from '../auth.ts';
import {
  type ApiContext,
  ApiError,
  type App,
  decodeCursor,
  encodeCursor,
  errorResponses,
} from '../context.ts';
import {
  CreateDestination,
  Destination as DestinationBody,
  DestinationWithSecret,
  IdParams,
  ListQuery,
  listOf,
  PatchDestination,
  TenantQuery,
} from '../contract.ts';
import { headerProblems } from '../contract-receiver.ts';
import { notFound } from '../errors.ts';
import { destinationPage } from '../narrowed.ts';
import { presentDestination, presentDestinationWithSecret } from '../present.ts';
import { checkTransform } from '../transform-check.ts';

const DEFAULT_TIMEOUT_MS = 15_000;
export const tags = ['destinations'];

/** The destination named in the path, if the caller may see it; 404 otherwise. */
export async function ownedDestination(ctx: ApiContext, request: FastifyRequest): Promise<Destination> {
  const { id } = request.params as { id: string };
  const destination = await ctx.store.getDestination(id);
  if (
    !destination ||
    !(await ctx.auth.canAccess(request, destination.tenantId)) ||
    !ctx.auth.seesDestination(request, destination.id)
  )
    throw notFound('destination', id);
  return destination;
}

/**
 * The tenant's destinations that an operational event about `destinationId` went to
 * (`@sluice/store` operational.ts: they name its type, and are not that destination) have
 * work: woken. Read again here, as these changes are rare.
 */
export async function wakeSubscribers(
  ctx: ApiContext,
  tenantId: string,
  destinationId: string,
  type: string,
): Promise<void> {
  for (const d of await ctx.store.listDestinations(tenantId))
    if (d.id !== destinationId && matchesEventType(d.eventTypes, type)) ctx.dispatcher.wake(d.id);
}

/**
 * A client certificate given now that ends in less than 14 days is told to the tenant at once
 * (`sluice.destination.certificate_expiring`; the hourly check tells of the others; the key
 * names the certificate, so it is told once).
 */
async function noticeCertificate(ctx: ApiContext, d: Destination): Promise<void> {
  const notice = certificateNotice(d, ctx.clock());
  if (notice === undefined) return;
  await ctx.store.emitOperational([notice], ctx.clock());
  await wakeSubscribers(ctx, d.tenantId, d.id, notice.type);
}

/**
 * The destination's headers beside its credential, as they will be (a create, or a PATCH
 * over the current ones): `authorization` in headers while `auth` is set, or the header
 * credential's name among them, is a `400 validation_failed` at `headers.<name>`.
 */
function checkHeadersWithAuth(headers: DestinationHeaders, auth: DestinationAuth | null): void {
  if (auth === null) return;
  const details = headerProblems(headers, true).map(({ name, message }) => ({
    path: `headers.${name}`,
    message,
    code: 'custom',
  }));
  if (auth.type === 'header')
    for (const name of Object.keys(headers))
      if (name.toLowerCase() === auth.name.toLowerCase())
        details.push({ path: `headers.${name}`, message: 'is set by auth', code: 'custom' });
  const first = details[0];
  if (first !== undefined)
    throw new ApiError(400, 'validation_failed', `${first.path}: ${first.message}`, details);
}

export function destinationRoutes(app: App, ctx: ApiContext): void {
  const { store, dispatcher, auth, config, clock } = ctx;

  const checkUrl = (url: string, path = 'url'): void => {
    const refused = checkUrlHost(new URL(url), config.allowPrivateNetworks);
    if (refused)
      throw new ApiError(
        400,
        'destination_not_allowed',
        path === 'url' ? refused.message : `${path}: ${refused.message}`,
        path === 'url' ? { url } : { url, path },
      );
  };
  /**
   * `tls` as it will be beside the URL it will have: an https URL, its PEM texts sound
   * (`tlsProblems`: a key not the certificate's, an expired certificate…), each problem a
   * `400 validation_failed` at `tls.<field>`.
   */
  const checkTls = (tls: DestinationTls | null, url: string): void => {
    if (tls === null) return;
    const details = tlsProblems(tls, clock()).map((p) => ({
      path: `tls.${p.path}`,
      message: p.message,
      code: 'custom',
    }));
    if (!url.startsWith('https:'))
      details.push({ path: 'tls', message: 'needs an https url', code: 'custom' });
    const first = details[0];
    if (first !== undefined)
      throw new ApiError(400, 'validation_failed', `${first.path}: ${first.message}`, details);
  };
  // The token endpoint is reached from the same network as the receiver: the same rules.
  const checkCredential = (credential: DestinationAuth | null | undefined): void => {
    if (credential?.type === 'oauth2_client_credentials') checkUrl(credential.tokenUrl, 'auth.tokenUrl');
  };

  app.post(
    '/v1/destinations',
    {
      // A portal link narrowed to some destinations cannot add one (it could not see it).
      config: { auth: 'tenant', portal: 'whole' },
      schema: {
        tags,
        summary: 'Create a destination; a signing secret is generated unless given',
        querystring: TenantQuery,
        body: CreateDestination,
        response: { 201: DestinationWithSecret, ...errorResponses(404, 413) },
      },
    },
    async (request, reply) => {
      const tenantId = await auth.tenantFor(request, request.query.tenantId);
      const input = request.body;
      checkUrl(input.url);
      const headers = input.headers ?? {};
      const credential = input.auth ?? null;
      checkCredential(credential);
      checkHeadersWithAuth(headers, credential);
      const tls = input.tls ?? null;
      checkTls(tls, input.url);
      await checkTransform(ctx, tenantId, input.transform);
      const destination = await store.createDestination(
        {
          id: newId('dst'),
          tenantId,
          name: input.name ?? null,
          url: input.url,
          rateLimit: input.rateLimit,
          maxConcurrency: input.maxConcurrency ?? null,
          adaptive: input.adaptive ?? false,
          ordering: input.ordering ?? DEFAULT_ORDERING,
          eventTypes: input.eventTypes ?? ['*'],
          retry: input.retry ?? { ...DEFAULT_RETRY_POLICY },
          timeoutMs: input.timeoutMs ?? DEFAULT_TIMEOUT_MS,
          headers,
          auth: credential,
          tls,
          filter: input.filter ?? null,
          transform: input.transform ?? null,
          secrets: [{ secret: input.secret ?? generateSecret(), expiresAt: null }],
        },
        clock(),
      );
      await dispatcher.destinationCreated(destination.id);
      if (tls !== null) await noticeCertificate(ctx, destination);
      return reply.status(201).send(presentDestinationWithSecret(destination));
    },
  );

  app.get(
    '/v1/destinations',
    {
      config: { auth: 'tenant' },
      schema: {
        tags,
        summary: 'List destinations, newest first',
        querystring: ListQuery,
        response: { 200: listOf(DestinationBody), ...errorResponses(404) },
      },
    },
    async (request) => {
      const { limit, cursor, tenantId } = request.query;
      const scope = await auth.scope(request, tenantId);
      const page = await destinationPage(ctx, request, scope, { limit, after: decodeCursor(cursor, 'dst') });
      return { data: page.items.map((d) => presentDestination(d)), nextCursor: encodeCursor(page.next) };
    },
  );

  app.get(
    '/v1/destinations/:id',
    {
      config: { auth: 'tenant' },
      schema: {
        tags,
        summary: 'Get a destination',
        params: IdParams('dst'),
        querystring: TenantQuery,
        response: { 200: DestinationBody, ...errorResponses(404) },
      },
    },
    async (request) => presentDestination(await ownedDestination(ctx, request)),
  );

  app.patch(
    '/v1/destinations/:id',
    {
      config: { auth: 'tenant' },
      schema: {
        tags,
        summary: 'Change a destination; a new rateLimit is in force within one tick',
        params: IdParams('dst'),
        querystring: TenantQuery,
        body: PatchDestination,
        response: { 200: DestinationBody, ...errorResponses(403, 404, 413) },
      },
    },
    async (request) => {
      const current = await ownedDestination(ctx, request);
      const { secret, headers, auth: credential, tls, ...fields } = request.body;
      // A link narrowed to some destinations may not choose what they receive: `*` or
      // `sluice.*` would bring it the others' events and news of them.
      if (fields.eventTypes !== undefined && narrowedTo(request) !== undefined) {
        throw new ApiError(
          403,
          'forbidden',
          'a portal link narrowed to some destinations cannot change eventTypes',
        );
      }
      if (fields.url !== undefined) checkUrl(fields.url);
      checkCredential(credential);
      const patch: DestinationPatch = { ...fields };
      if (headers !== undefined) patch.headers = headers ?? {};
      if (credential !== undefined) patch.auth = credential;
      if (tls !== undefined) patch.tls = tls;
      // A new URL is checked against the tls it keeps, and new tls against the URL.
      if (tls !== undefined || fields.url !== undefined)
        checkTls(patch.tls === undefined ? current.tls : patch.tls, fields.url ?? current.url);
      checkHeadersWithAuth(
        patch.headers ?? current.headers,
        patch.auth === undefined ? current.auth : patch.auth,
      );
      await checkTransform(ctx, current.tenantId, patch.transform);
      dispatcher.checkAnnounce();
      if (secret !== undefined) patch.secrets = [{ secret, expiresAt: null }];
      // A new URL is a new endpoint: its circuit starts closed (docs/adr/0007).
      const reset =
        fields.url !== undefined && fields.url !== current.url
          ? await store.resetHealth(current.id, clock())
          : null;
      const updated = await store.updateDestination(current.id, patch, clock());
      if (!updated) throw notFound('destination', current.id);
      await dispatcher.destinationChanged(updated.id);
      // A suspended one was told recovered in the reset's transaction.
      if (reset?.from === 'suspended')
        await wakeSubscribers(ctx, updated.tenantId, updated.id, 'sluice.destination.recovered');
      if (tls) await noticeCertificate(ctx, updated);
      return presentDestination(updated);
    },
  );

  app.delete(
    '/v1/destinations/:id',
    {
      config: { auth: 'tenant' },
      schema: {
        tags,
        summary: 'Delete a destination; its undelivered deliveries become cancelled',
        params: IdParams('dst'),
        querystring: TenantQuery,
        response: { 204: z.null().meta({ description: 'Deleted' }), ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      const current = await ownedDestination(ctx, request);
      dispatcher.checkAnnounce();
      await store.deleteDestination(current.id, clock());
      await dispatcher.destinationChanged(current.id);
      return reply.status(204).send(null);
    },
  );
}
