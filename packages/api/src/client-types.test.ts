/**
 * The typed client's types are the contract's: `packages/client/src/openapi.ts` (which the
 * client's named types alias) is exactly what openapi-typescript makes of the document the
 * API serves now. A change to a route's schemas without regenerating fails here, naming the
 * command that regenerates.
 */

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { CLIENT_TYPES, clientTypes, committedClientTypes, GENERATE } from './client-types.ts';

/** The first line where the two differ, 1-based; 0 when they are the same. */
function firstDifference(a: string, b: string): number {
  const left = a.split('\n');
  const right = b.split('\n');
  for (let i = 0; i < Math.max(left.length, right.length); i++) if (left[i] !== right[i]) return i + 1;
  return 0;
}

it("the client's generated types are what the API's contract makes now", async () => {
  const [committed, generated] = await Promise.all([committedClientTypes(), clientTypes()]);
  const line = firstDifference(committed, generated);
  assert.ok(
    line === 0,
    `${CLIENT_TYPES.pathname} is not the API's contract (they differ from line ${line}): run \`${GENERATE}\``,
  );
});
