/**
 * Backlog-alert settings (docs/adr/0009-backlog-alerts.md), read by the processes that run
 * the alerter: the single box and the rate limiter. Thresholds apply to every destination;
 * 0 turns a kind off. With `SLUICE_ALERT_URL` set, each alert raised or resolved is also a
 * signed webhook to it, paced by `SLUICE_ALERT_RATE_LIMIT`.
 */

import { z } from 'zod';

/** An integer in [min, max] (as index.ts's `int`; not imported from there: no import cycle). */
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

const httpUrl = z.string().refine((value) => {
  try {
    const url = new URL(value);
    return (
      (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === ''
    );
  } catch {
    return false;
  }
}, 'an http(s) URL without credentials, such as https://alerts.example.com/sluice');

const RATE = /^([1-9][0-9]{0,6})\/(second|minute|hour)$/;

export const alerts = {
  SLUICE_ALERT_PENDING_COUNT: int(0, 1_000_000_000).default(10_000),
  SLUICE_ALERT_PENDING_AGE_SECONDS: int(0, 30 * 86_400).default(300),
  SLUICE_ALERT_INTERVAL_MS: int(100, 3_600_000).default(15_000),
  SLUICE_ALERT_URL: httpUrl.optional(),
  SLUICE_ALERT_SECRET: z
    .string()
    .regex(/^whsec_[A-Za-z0-9+/]{22,}={0,2}$/, 'whsec_ followed by a base64 key of at least 16 bytes')
    .optional(),
  SLUICE_ALERT_RATE_LIMIT: z
    .string()
    .regex(RATE, 'a rate such as 10/minute (per second, minute or hour)')
    .default('10/minute')
    .transform((value) => {
      const [, limit, period] = RATE.exec(value) ?? [];
      return { limit: Number(limit), period: period as 'second' | 'minute' | 'hour' };
    }),
};

type AlertEnv = z.output<z.ZodObject<typeof alerts>>;

/** For a service schema's `superRefine`: the secret is required with the URL. */
export function checkAlerts(config: AlertEnv, ctx: z.RefinementCtx): void {
  if (config.SLUICE_ALERT_URL !== undefined && config.SLUICE_ALERT_SECRET === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['SLUICE_ALERT_SECRET'],
      message: 'required when SLUICE_ALERT_URL is set (whsec_…: the operator verifies the alerts with it)',
    });
  }
}

export interface AlertSettings {
  thresholds: { pendingCount: number | null; pendingAgeSeconds: number | null };
  intervalMs: number;
  sink: {
    url: string;
    secret: string;
    rateLimit: { limit: number; period: 'second' | 'minute' | 'hour' };
  } | null;
}

export function alertSettings(config: AlertEnv): AlertSettings {
  return {
    thresholds: {
      pendingCount: config.SLUICE_ALERT_PENDING_COUNT || null,
      pendingAgeSeconds: config.SLUICE_ALERT_PENDING_AGE_SECONDS || null,
    },
    intervalMs: config.SLUICE_ALERT_INTERVAL_MS,
    sink:
      config.SLUICE_ALERT_URL !== undefined && config.SLUICE_ALERT_SECRET !== undefined
        ? {
            url: config.SLUICE_ALERT_URL,
            secret: config.SLUICE_ALERT_SECRET,
            rateLimit: config.SLUICE_ALERT_RATE_LIMIT,
          }
        : null,
  };
}
