/**
 * The private cluster the Redis Cluster tests run on: keys with different hash tags land on
 * every master, a master killed with SIGKILL fails over to its replica and an ioredis `Cluster`
 * reads what it wrote before and writes again, and stop() leaves no process and no directory.
 * Where `redis-server` or `redis-cli` is not installed it fails, saying so.
 */

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { Cluster } from 'ioredis';
import { startPrivateCluster } from './private-cluster.ts';

/** The command lines of the running processes (redis-server's shows `127.0.0.1:<port>`). */
const processes = (): string[] => execFileSync('ps', ['-eo', 'args='], { encoding: 'utf8' }).split('\n');

test('a private cluster: keys on every master, a killed master fails over, nothing left after', {
  timeout: 120_000,
}, async (t) => {
  const started = performance.now();
  const cluster = await startPrivateCluster();
  t.diagnostic(`formed in ${Math.round(performance.now() - started)} ms`);
  const client = new Cluster(cluster.seeds);
  try {
    const nodes = await cluster.nodes();
    assert.equal(nodes.length, 6);
    assert.equal(nodes.filter((n) => n.role === 'master').length, 3);
    const masters = await cluster.masterPorts();
    assert.equal(masters.length, 3);
    assert.ok(
      masters.some((port) => cluster.url === `redis://127.0.0.1:${port}`),
      cluster.url,
    );

    const key = (shard: number) => `sluice-test:{s${shard}}:k`;
    for (let shard = 0; shard < 8; shard++) await client.set(key(shard), `v${shard}`);
    const counts = await cluster.keysOnEachMaster('sluice-test:*');
    assert.deepEqual([...counts.keys()].sort(), [...masters].sort());
    for (const [port, count] of counts) assert.ok(count > 0, `no key on the master on ${port}`);
    assert.equal(
      [...counts.values()].reduce((a, b) => a + b),
      8,
    );

    // The master of {s0}, and its write on the replica before the kill (replication is async).
    const slot = Number(await client.cluster('KEYSLOT', key(0)));
    const owner = nodes.find((n) => n.role === 'master' && n.slots.some(([a, b]) => a <= slot && slot <= b));
    assert.ok(owner, `no master serves slot ${slot}`);
    const replica = nodes.find((n) => n.masterId === owner.id);
    assert.ok(replica, `the master on ${owner.port} has no replica`);
    const ownerClient = client.nodes('master').find((node) => node.options.port === owner.port);
    assert.ok(ownerClient, `the client has no connection to ${owner.port}`);
    assert.equal(await ownerClient.wait(1, 1_000), 1);

    client.on('error', () => {}); // the killed master's connection: expected
    const killed = performance.now();
    await cluster.kill(owner.port);
    const heir = await cluster.waitForFailover(owner.port);
    t.diagnostic(`failover of ${owner.port} to ${heir}: ${Math.round(performance.now() - killed)} ms`);
    assert.equal(heir, replica.port);
    assert.ok(!(await cluster.masterPorts()).includes(owner.port));
    assert.equal((await cluster.nodes()).find((n) => n.port === owner.port)?.failed, true);

    assert.equal(await client.get(key(0)), 'v0');
    for (let shard = 0; shard < 8; shard++) await client.set(key(shard), `w${shard}`);
    for (let shard = 0; shard < 8; shard++) assert.equal(await client.get(key(shard)), `w${shard}`);
  } finally {
    client.disconnect();
    await cluster.stop();
  }
  for (const { port } of cluster.seeds) {
    const left = processes().filter((args) => args.startsWith('redis-server') && args.includes(`:${port}`));
    assert.deepEqual(left, [], `a redis-server on ${port} is left`);
  }
  assert.equal(existsSync(cluster.dir), false, `${cluster.dir} is left`);
});
