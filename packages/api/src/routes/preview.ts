/**
 * `POST /v1/destinations/:id/preview` (docs/api.md "Preview"): what the destination would
 * send for an event — whether it matches its eventTypes and filter, and the headers and body
 * its transform makes, before signing — or why nothing would be sent. A filter or transform
 * given in the request is tried instead of the destination's own, so one can be tried before
 * it is saved. Nothing is accepted or sent; each preview takes from the tenant's preview
 * budget (`SLUICE_TENANT_PREVIEWS_PER_SECOND`, past it `429 rate_limited`).
 */

import { matchesEventType, matchesFilter } from '@sluice/core';
import { TRANSFORM_CANCELLED, TRANSFORM_FAILED } from '@sluice/engine';
import { type ApiContext, ApiError, type App, errorResponses } from '../context.ts';
import { IdParams, TenantQuery } from '../contract.ts';
import { Preview, PreviewBody } from '../contract-sent.ts';
import { payloadDepthLimit } from '../depth.ts';
import { parseExact } from '../json-body.ts';
import { ownedDestination, tags } from './destinations.ts';

export function previewRoutes(app: App, ctx: ApiContext): void {
  const { config, clock, transforms, quotas } = ctx;

  app.post(
    '/v1/destinations/:id/preview',
    {
      config: { auth: 'tenant' },
      preValidation: payloadDepthLimit(config.maxPayloadDepth),
      schema: {
        tags,
        summary:
          'What this destination would send for an event: its filter and transform applied, before signing',
        params: IdParams('dst'),
        querystring: TenantQuery,
        body: PreviewBody,
        response: { 200: Preview, ...errorResponses(404, 413, 429) },
      },
    },
    async (request, reply) => {
      const destination = await ownedDestination(ctx, request);
      await quotas.admitPreview(destination.tenantId, reply);
      const { type, payload } = request.body;
      const exact = (request.exactBody as { payload?: unknown } | undefined)?.payload;
      const text = JSON.stringify(exact === undefined ? payload : exact);
      if (Buffer.byteLength(text) > config.maxPayloadBytes)
        throw new ApiError(
          413,
          'payload_too_large',
          `payload is larger than ${config.maxPayloadBytes} bytes`,
          {
            maxPayloadBytes: config.maxPayloadBytes,
          },
        );
      const filter = request.body.filter === undefined ? destination.filter : request.body.filter;
      const transform = request.body.transform === undefined ? destination.transform : request.body.transform;
      const matches =
        matchesEventType(destination.eventTypes, type) && matchesFilter(filter, { type, payload });
      if (!matches) return { matches, request: null, error: null };
      let headers = destination.headers;
      let body = text;
      if (transform !== null) {
        const shaped = await transforms.apply(destination, transform.code, type, text, clock(), false);
        if (shaped.kind === 'cancel')
          return {
            matches,
            request: null,
            error: {
              code: TRANSFORM_CANCELLED,
              message: 'the transform cancels it: no request would be made',
            },
          };
        // The sandbox, not the code, could not answer: an outage (503 with Retry-After).
        if (shaped.kind === 'unavailable')
          throw new ApiError(503, 'unavailable', `the transform sandbox could not run it: ${shaped.message}`);
        if (shaped.kind === 'failed')
          return { matches, request: null, error: { code: TRANSFORM_FAILED, message: shaped.message } };
        headers = shaped.headers;
        body = shaped.body;
      }
      const sent: Record<string, string> = { 'content-type': 'application/json' };
      for (const [name, value] of Object.entries(headers)) sent[name.toLowerCase()] = value;
      return { matches, request: { headers: sent, body: parseExact(body) }, error: null };
    },
  );
}
