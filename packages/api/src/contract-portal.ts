/**
 * The contract of the tenant side's portal (docs/api.md "Portal links", "Test event", "Who
 * am I"): who a token is, portal links and their tokens, and the test event, as zod schemas
 * beside contract.ts (which they extend).
 */

import { EVENT_TYPE } from '@sluice/core';
import { z } from 'zod';
import { idOf, jsonValue, ListQuery } from './contract.ts';

const isoTime = z.iso.datetime();

/** Most destinations one link may be narrowed to. */
export const MAX_LINK_DESTINATIONS = 100;

/**
 * A logo the viewer's browser loads (Sluice never fetches it): https, an inline `data:image/…`,
 * or http on a loopback address (local development and tests).
 */
export function isLogoUrl(value: string): boolean {
  if (value.startsWith('data:')) return /^data:image\/[a-z0-9.+-]+[;,]/i.test(value);
  try {
    const url = new URL(value);
    if (url.username !== '' || url.password !== '') return false;
    if (url.protocol === 'https:') return true;
    return url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  } catch {
    return false;
  }
}

export const Branding = z
  .strictObject({
    title: z
      .string()
      .min(1)
      .max(100)
      .refine((v) => ![...v].some((c) => c.charCodeAt(0) < 0x20), 'must not contain control characters')
      .optional(),
    accentColor: z
      .string()
      .regex(/^#[0-9a-fA-F]{6}$/, 'must be a colour as #rrggbb')
      .optional(),
    logoUrl: z
      .string()
      .max(65_536)
      .refine(isLogoUrl, 'must be an https: URL, a data:image/… URL, or http: on a loopback address')
      .optional()
      .meta({ description: "Loaded by the viewer's browser only; Sluice never fetches it." }),
  })
  .meta({ id: 'Branding' });

export const PortalAccess = z.enum(['read', 'manage']);

export const CreatePortalLink = z
  .strictObject({
    tenantId: idOf('ten').optional().meta({ description: 'The admin token names the tenant here.' }),
    access: PortalAccess.default('manage'),
    expiresInSeconds: z.int().min(10).max(86_400).default(900),
    destinationIds: z
      .array(idOf('dst'))
      .min(1)
      .max(MAX_LINK_DESTINATIONS)
      .optional()
      .meta({ description: 'Only these destinations (the tenant’s own); absent: all of them.' }),
    branding: Branding.optional(),
  })
  .meta({ id: 'CreatePortalLink' });

export const PortalLink = z
  .object({
    id: z.string(),
    tenantId: z.string(),
    access: PortalAccess,
    destinationIds: z.array(z.string()).nullable(),
    branding: Branding.nullable(),
    createdAt: isoTime,
    expiresAt: isoTime,
    expired: z.boolean(),
  })
  .meta({ id: 'PortalLink', description: 'A portal link, never its token.' });

export const CreatedPortalLink = z
  .object({
    id: z.string(),
    url: z.string().meta({ description: 'Opens the portal signed in with the token (in the fragment).' }),
    token: z.string().meta({ description: 'Shown once; stored only as a hash. A v1 bearer token.' }),
    expiresAt: isoTime,
  })
  .meta({ id: 'CreatedPortalLink' });

export const PortalLinkQuery = ListQuery;

export const Whoami = z
  .object({
    role: z.enum(['admin', 'tenant', 'portal']),
    tenant: z.object({ id: z.string(), name: z.string() }).nullable(),
    portal: z
      .object({
        id: z.string(),
        access: PortalAccess,
        destinationIds: z.array(z.string()).nullable(),
        branding: Branding.nullable(),
        expiresAt: isoTime,
      })
      .nullable(),
  })
  .meta({ id: 'Whoami' });

export const TestEvent = z
  .strictObject({
    type: z
      .string()
      .min(1)
      .max(200)
      .regex(EVENT_TYPE, 'must be a dotted event type, no wildcard')
      .optional()
      .meta({ description: 'Default `sluice.test`.' }),
    payload: jsonValue.optional(),
  })
  .nullish()
  .meta({ id: 'TestEvent' });
