import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Destination } from '@sluice/store';
import { type RecoveryPorts, recoverFromStore, type Send } from './recovery.ts';

const NOW = 10_000_000;
const HOUR = 3_600_000;

describe('recoverFromStore (both shapes)', () => {
  it('returns the claims, refills each pace with its sends (the attempts, then the claims as sent now), then schedules the pending work', async () => {
    const calls: string[] = [];
    const restored: [string, string | undefined, readonly Send[]][] = [];
    const ports: RecoveryPorts = {
      store: {
        recentAttempts: async (since) => {
          calls.push(`recentAttempts ${since}`);
          return [
            { destinationId: 'dst_a', startedAt: NOW - 30, finishedAt: NOW - 20 },
            { destinationId: 'dst_b', startedAt: NOW - 25, finishedAt: NOW - 15 },
            { destinationId: 'dst_a', startedAt: NOW - 10, finishedAt: NOW - 5 },
          ];
        },
        pendingDestinations: async () => {
          calls.push('pendingDestinations');
          return [
            { destinationId: 'dst_a', nextPendingAt: NOW },
            { destinationId: 'dst_c', nextPendingAt: NOW + 100 },
          ];
        },
      },
      // dst_b is gone from the store.
      destinations: {
        get: async (id) => (id === 'dst_b' ? undefined : ({ id } as unknown as Destination)),
      },
      requeueClaims: async (now) => {
        calls.push(`requeueClaims ${now}`);
        return new Map([
          ['dst_a', 2],
          ['dst_c', 1],
        ]);
      },
      restorePace: (id, destination, sends) => {
        calls.push(`restorePace ${id}`);
        restored.push([id, destination?.id, sends]);
      },
      wake: (id, at) => void calls.push(`wake ${id} ${at}`),
    };
    assert.deepEqual(await recoverFromStore(ports, NOW), { requeued: 3, scheduled: 2 });
    assert.deepEqual(calls, [
      `requeueClaims ${NOW}`,
      `recentAttempts ${NOW - HOUR - 60_000}`,
      'restorePace dst_a',
      'restorePace dst_b',
      'restorePace dst_c',
      'pendingDestinations',
      `wake dst_a ${NOW}`,
      `wake dst_c ${NOW + 100}`,
    ]);
    const now = { startedAt: NOW, finishedAt: NOW };
    assert.deepEqual(restored, [
      [
        'dst_a',
        'dst_a',
        [
          { startedAt: NOW - 30, finishedAt: NOW - 20 },
          { startedAt: NOW - 10, finishedAt: NOW - 5 },
          now,
          now,
        ],
      ],
      ['dst_b', undefined, [{ startedAt: NOW - 25, finishedAt: NOW - 15 }]],
      ['dst_c', 'dst_c', [now]],
    ]);
  });
});
