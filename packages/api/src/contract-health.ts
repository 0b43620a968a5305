/**
 * The contract of endpoint health (docs/adr/0007; docs/api.md "Endpoint health"): the
 * destination's circuit breaker as the API shows it, as zod schemas beside contract.ts
 * (which re-exports them).
 */

import { ERROR_CLASSES, HEALTH_STATES, SUSPEND_REASONS } from '@sluice/core';
import { z } from 'zod';

const isoTime = z.iso.datetime();

export const HealthState = z.enum(HEALTH_STATES as ['healthy', 'degraded', 'suspended']);
export const ErrorClass = z.enum(ERROR_CLASSES as ['ok', ...string[]]);

export const Health = z
  .object({
    state: HealthState.meta({
      description: 'healthy; degraded (failures are held, not dead); suspended (one probe at a time).',
    }),
    since: isoTime.nullable().meta({ description: 'When this state began; null: since creation.' }),
    consecutiveFailures: z.int(),
    nextProbeAt: isoTime.nullable().meta({ description: 'Suspended only: when the next probe may go.' }),
    lastErrorClass: ErrorClass.nullable().meta({
      description: 'connection, dns, timeout, tls or 5xx: the class of the last failure that counted.',
    }),
    suspendReason: z
      .enum(SUSPEND_REASONS as ['consecutive', 'failure_rate'])
      .nullable()
      .meta({
        description:
          'Suspended only: what opened the circuit: consecutive (failures in a row) or failure_rate (the share of failures over the window).',
      }),
    failureRate: z.number().min(0).max(1).nullable().meta({
      description:
        'The share of failures that count (timeouts and connection failures included) in the breaker window; null while no window is open.',
    }),
    certificateExpiresAt: isoTime.nullable().meta({
      description:
        'When the client certificate (tls) stops being valid, once that is less than 14 days away; null otherwise.',
    }),
  })
  .meta({ id: 'Health', description: 'Endpoint health, the circuit breaker of the destination.' });

export const HealthTransition = z
  .object({
    at: isoTime,
    from: HealthState,
    to: HealthState,
    reason: z.enum(['failures', 'success', 'operator']),
    consecutiveFailures: z.int(),
    errorClass: ErrorClass.nullable(),
  })
  .meta({ id: 'HealthTransition' });

export const HealthWithTransitions = Health.extend({
  transitions: z.array(HealthTransition).meta({ description: 'The latest transitions, newest first.' }),
}).meta({ id: 'HealthWithTransitions' });
