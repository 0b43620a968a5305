/**
 * Two API replicas on one distributed state (the distributed shape only): for the tests that
 * show a revocation (a key, a portal link) is in force at once in a replica other than the one
 * that made it. Stopped, with the state, when the test ends.
 */

import type { TestContext } from 'node:test';
import { childState } from './shape.ts';
import {
  type ChildProcessHandle,
  type Client,
  client,
  freePort,
  randomToken,
  spawnService,
} from './sluice.ts';

export async function twoApiReplicas(t: TestContext): Promise<{ a: Client; b: Client; adminToken: string }> {
  const state = await childState();
  const adminToken = randomToken();
  const env = { ...state.env, SLUICE_ADMIN_TOKEN: adminToken };
  const ports = [await freePort(), await freePort()];
  const replicas: ChildProcessHandle[] = [];
  try {
    for (const port of ports)
      replicas.push(await spawnService('services/api/src/main.ts', { ...env, PORT: String(port) }));
  } catch (err) {
    for (const r of replicas) await r.kill9();
    await state.close();
    throw err;
  }
  const [a, b] = ports.map((port) => client(`http://127.0.0.1:${port}`)) as [Client, Client];
  t.after(async () => {
    await a.close();
    await b.close();
    for (const r of replicas) await r.stop();
    await state.close();
  });
  return { a, b, adminToken };
}
