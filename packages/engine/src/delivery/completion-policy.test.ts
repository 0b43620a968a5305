import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Health } from '@sluice/core';
import type { CompletedAttempt, Destination, HealthChange } from '@sluice/store';
import { pino } from 'pino';
import { type CompletionPorts, completionFollowUps, pendingAgainAt } from './completion-policy.ts';
import type { Completion } from './completion-writer.ts';

const NOW = 1_000_000;

/** Every port call, in order, as `port id [at]`. */
function recording(extra: Partial<CompletionPorts> = {}) {
  const calls: string[] = [];
  const warnings: string[] = [];
  const logger = pino({ level: 'silent' });
  logger.warn = ((_: unknown, message: string) => {
    warnings.push(message);
  }) as unknown as typeof logger.warn;
  const ports: CompletionPorts = {
    logger,
    clock: () => NOW,
    wake: (id, at) => calls.push(`wake ${id} ${at}`),
    wakeAtRoom: ({ id }) => calls.push(`wakeAtRoom ${id}`),
    refresh: async (id) => calls.push(`refresh ${id}`),
    announce: async (id) => calls.push(`announce ${id}`),
    reopened: (id) => calls.push(`reopened ${id}`),
    ...extra,
  };
  return { calls, warnings, followUps: completionFollowUps(ports) };
}

function completion(
  outcome: Partial<Completion['outcome']>,
  { holdAt = null, ordering = 'none', maxConcurrency = null } = {} as {
    holdAt?: number | null;
    ordering?: string;
    maxConcurrency?: number | null;
  },
): Completion {
  return {
    completed: { holdAt } as unknown as CompletedAttempt,
    destination: { id: 'dst_a', ordering, maxConcurrency } as unknown as Destination,
    outcome: { transition: 'succeed', nextAttemptAt: null, disableDestination: false, ...outcome },
  };
}

function health(state: Health['state'], nextProbeAt: number | null = null): Health {
  return { state, nextProbeAt } as Health;
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('pendingAgainAt', () => {
  it('is the next attempt of a retry, none after a success', () => {
    assert.equal(pendingAgainAt(completion({ transition: 'retry', nextAttemptAt: NOW + 30 })), NOW + 30);
    assert.equal(pendingAgainAt(completion({ transition: 'succeed' })), null);
  });

  it('is the hold of an exhausted attempt the breaker held, none for a dead one', () => {
    const held = completion({ transition: 'exhaust', nextAttemptAt: NOW + 1 }, { holdAt: NOW + 60 });
    assert.equal(pendingAgainAt(held), NOW + 60);
    assert.equal(pendingAgainAt(completion({ transition: 'exhaust', nextAttemptAt: NOW + 1 })), null);
  });
});

describe('completionFollowUps', () => {
  it('wakes a retry at its next attempt', async () => {
    const { calls, followUps } = recording();
    followUps.onSettled(completion({ transition: 'retry', nextAttemptAt: NOW + 30 }));
    await turn();
    assert.deepEqual(calls, [`wake dst_a ${NOW + 30}`]);
  });

  it('wakes an exhausted attempt the breaker held at its hold, nothing for a dead or delivered one', async () => {
    const { calls, followUps } = recording();
    followUps.onSettled(completion({ transition: 'exhaust' }, { holdAt: NOW + 60 }));
    followUps.onSettled(completion({ transition: 'exhaust' }));
    followUps.onSettled(completion({ transition: 'succeed' }));
    await turn();
    assert.deepEqual(calls, [`wake dst_a ${NOW + 60}`]);
  });

  it('refreshes then announces a destination a 410 disabled, and wakes nothing', async () => {
    const { calls, warnings, followUps } = recording();
    followUps.onSettled(completion({ transition: 'disable', nextAttemptAt: NOW, disableDestination: true }));
    await turn();
    assert.deepEqual(calls, ['refresh dst_a', 'announce dst_a']);
    assert.deepEqual(warnings, ['destination answered 410 Gone: disabled']);
  });

  it('wakes a suspended destination at its probe time, after refreshing and announcing it', async () => {
    const { calls, followUps } = recording();
    const change: HealthChange = {
      destinationId: 'dst_a',
      from: 'degraded',
      health: health('suspended', NOW + 9),
    };
    followUps.onHealth(change);
    await turn();
    assert.deepEqual(calls, ['refresh dst_a', 'announce dst_a', `wake dst_a ${NOW + 9}`]);
  });

  it('wakes a circuit just closed at once, after noting it reopened', async () => {
    const { calls, followUps } = recording();
    followUps.onHealth({ destinationId: 'dst_a', from: 'suspended', health: health('healthy') });
    await turn();
    assert.deepEqual(calls, ['refresh dst_a', 'announce dst_a', 'reopened dst_a', `wake dst_a ${NOW}`]);
  });

  it('only refreshes and announces any other health move', async () => {
    const { calls, followUps } = recording();
    followUps.onHealth({ destinationId: 'dst_a', from: 'healthy', health: health('degraded') });
    await turn();
    assert.deepEqual(calls, ['refresh dst_a', 'announce dst_a']);
  });

  it('wakes a capped destination at its room when a request finishes, an uncapped one not', () => {
    const { calls, followUps } = recording();
    followUps.onFinished(completion({}, { maxConcurrency: 4 }));
    followUps.onFinished(completion({}, { ordering: 'fifo' }));
    followUps.onFinished(completion({}));
    assert.deepEqual(calls, ['wakeAtRoom dst_a', 'wakeAtRoom dst_a']);
  });

  it('logs a follow-up that fails, thrown or rejected', async () => {
    const { warnings, followUps } = recording({
      wake: () => {
        throw new Error('down');
      },
      refresh: () => Promise.reject(new Error('down')),
    });
    followUps.onSettled(completion({ transition: 'retry', nextAttemptAt: NOW }));
    followUps.onHealth({ destinationId: 'dst_a', from: 'healthy', health: health('degraded') });
    await turn();
    assert.equal(warnings.filter((m) => m.includes('the sweeper will repair it')).length, 2);
  });
});
