/** Backlog alerts (ADR 0009) as both stores keep them: the notice an alert's change sends, and the rows. */

import type { AlertKind, BacklogSample, FiringAlert } from '@sluice/core';
import type { NewEvent } from './delivery.ts';
import type { Row } from './rows.ts';

/** The event an alert's change is told by, and the tenant it is accepted for (ADR 0009). */
export interface AlertNotice {
  tenantId: string;
  event: NewEvent;
}

export function alertFromRow(r: Row): FiringAlert {
  return {
    destinationId: r.destination_id as string,
    tenantId: r.tenant_id as string,
    kind: r.kind as AlertKind,
    threshold: r.threshold as number,
    value: r.value as number,
    raisedAt: r.raised_at as number,
  };
}

/** A row of the backlog read: `destination_id`, `tenant_id`, `pending` and `oldest`. */
export function backlogSampleFromRow(r: Row): BacklogSample {
  return {
    destinationId: r.destination_id as string,
    tenantId: r.tenant_id as string,
    pending: r.pending as number,
    oldestDueAt: (r.oldest as number | null) ?? null,
  };
}
