/**
 * What follows a completion, for both shapes (the single box's Engine and the distributed
 * delivery worker): one policy over a few ports, so a change to retry or breaker policy is
 * one edit, tested once (`completion-policy.test.ts`).
 *
 * - settled (the batch committed): a retry's destination is woken at its next attempt; an
 *   exhausted attempt the breaker held is pending again at `holdAt` (docs/adr/0007); a 410
 *   disabled the destination: this process re-reads it and every other is told.
 * - health (a batch moved a destination's health): re-read and told; an open circuit's tick
 *   runs at the probe time, a circuit just closed runs at once (its backlog flows).
 * - notified (the batch's operational events gave a destination deliveries): woken now.
 * - finished (a request is over, before its batch commits): a freed slot of a capped
 *   destination (a fifo one is capped at 1) wakes it at the window's room.
 *
 * A follow-up that fails is logged, never lost: the sweeper re-wakes every destination with
 * pending work.
 */

import { concurrencyCap } from '@sluice/core';
import type { Destination, HealthChange } from '@sluice/store';
import type { Logger } from 'pino';
import { probeWakeAt } from '../tick/wake.ts';
import type { Completion, CompletionWriterDeps } from './completion-writer.ts';

/** When a settled attempt's delivery is pending again; null: it is not (delivered, dead, disabled). */
export function pendingAgainAt({
  outcome,
  completed,
}: Pick<Completion, 'outcome' | 'completed'>): number | null {
  // An exhausted attempt the breaker held is pending again at `holdAt` (docs/adr/0007).
  return outcome.transition === 'exhaust' ? (completed.holdAt ?? null) : outcome.nextAttemptAt;
}

/** What a shape gives the policy to act with. A port may answer at once or with a promise. */
export interface CompletionPorts {
  logger: Logger;
  clock: () => number;
  /** Schedules the destination's tick no later than `at` (sooner only). */
  wake(destinationId: string, at: number): unknown;
  /** Schedules its tick at the earliest moment its window has room (a freed slot). */
  wakeAtRoom(destination: Destination): unknown;
  /** This process re-reads the destination. */
  refresh(destinationId: string): unknown;
  /** Every other process re-reads it (the change feed); the single box has none to tell. */
  announce(destinationId: string): unknown;
  /** A circuit closed: what this process noted while it was open no longer holds. */
  reopened?(destinationId: string): void;
}

export type CompletionFollowUps = Required<
  Pick<CompletionWriterDeps, 'onSettled' | 'onFinished' | 'onHealth' | 'onNotified'>
>;

/** The CompletionWriter's follow-ups, over a shape's ports. */
export function completionFollowUps(ports: CompletionPorts): CompletionFollowUps {
  const { logger, clock } = ports;
  const failed = (err: unknown, destinationId: string) =>
    logger.warn({ err, destinationId }, 'wake after a completion failed; the sweeper will repair it');
  const run = (destinationId: string, step: () => unknown): void => {
    try {
      Promise.resolve(step()).catch((err: unknown) => failed(err, destinationId));
    } catch (err) {
      failed(err, destinationId);
    }
  };
  const healthChanged = async ({ destinationId: id, from, health }: HealthChange): Promise<void> => {
    await ports.refresh(id);
    await ports.announce(id);
    const now = clock();
    const probeAt = probeWakeAt(health, now);
    if (probeAt !== null) {
      await ports.wake(id, probeAt);
    } else if (from === 'suspended') {
      ports.reopened?.(id);
      await ports.wake(id, now);
    }
  };
  return {
    onSettled(completion) {
      const id = completion.destination.id;
      if (completion.outcome.disableDestination) {
        logger.warn({ destinationId: id }, 'destination answered 410 Gone: disabled');
        run(id, async () => {
          await ports.refresh(id);
          await ports.announce(id);
        });
        return;
      }
      const at = pendingAgainAt(completion);
      if (at !== null) run(id, () => ports.wake(id, at));
    },
    onHealth(change) {
      run(change.destinationId, () => healthChanged(change));
    },
    onNotified(destinationId) {
      run(destinationId, () => ports.wake(destinationId, clock()));
    },
    onFinished({ destination }) {
      if (concurrencyCap(destination.ordering, destination.maxConcurrency) === null) return;
      run(destination.id, () => ports.wakeAtRoom(destination));
    },
  };
}
