/** Endpoint health as the stores report it (docs/adr/0007). */

import type { ErrorClass, Health, HealthState } from '@sluice/core';
import type { Claim } from './work.ts';

/** A destination's health after a batch moved it: a transition, or a failed probe. */
export interface HealthChange {
  destinationId: string;
  from: HealthState;
  health: Health;
}

export interface HealthTransition {
  destinationId: string;
  at: number;
  from: HealthState;
  to: HealthState;
  reason: 'failures' | 'success' | 'operator';
  consecutiveFailures: number;
  errorClass: ErrorClass | null;
}

/** A suspended destination's probe claim: at most one delivery, and when the next may go. */
export interface ProbeClaim extends Claim {
  /** The next probe time after the claim; null when the destination is not suspended. */
  nextProbeAt: number | null;
}
