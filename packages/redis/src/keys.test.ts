import assert from 'node:assert/strict';
import { it } from 'node:test';
import calculateSlot from 'cluster-key-slot';
import { Keys } from './keys.ts';

/** How many of `keys`' shards each of `masters` masters holds, the slots split into equal ranges. */
function perMaster(keys: Keys, masters: number): number[] {
  const held = new Array<number>(masters).fill(0);
  for (const shard of keys.allShards()) {
    const slot = calculateSlot(keys.hashTag(shard));
    const master = Math.min(masters - 1, Math.floor((slot * masters) / 16_384));
    held[master] = (held[master] ?? 0) + 1;
  }
  return held;
}

it('shards spread evenly over the masters of a cluster whose masters hold equal ranges of slots', () => {
  for (const [masters, shards] of [
    [3, 6],
    [3, 12],
    [6, 48],
    [21, 63],
    [24, 96],
  ] as const) {
    const held = perMaster(new Keys('sluice', shards, { cluster: true }), masters);
    assert.deepEqual(
      new Set(held),
      new Set([shards / masters]),
      `${shards} shards on ${masters} masters: ${held}`,
    );
  }
});

it("one destination's keys share its shard's tag; one shard keeps {s0}", () => {
  const keys = new Keys('sluice', 8);
  const shard = keys.shardOf('dst_a');
  const tag = keys.hashTag(shard);
  assert.match(tag, /^\{s\d+\.\d+\}$/);
  for (const key of [keys.queued('dst_a'), keys.pace('dst_a'), keys.schedule(shard), keys.bullPrefix(shard)])
    assert.ok(key.includes(tag), key);
  assert.equal(new Keys('sluice').hashTag(0), '{s0}');
  assert.equal(new Keys('sluice').schedule(0), 'sluice:{s0}:schedule');
});
