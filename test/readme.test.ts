/**
 * The README's walk-through, run as written: its ```sh blocks from "Try it" to the end of
 * "The distributed shape", read out of README.md, so that the text and the test cannot drift.
 * Sluice is started by the README's own start command for the shape under test (`npm start`,
 * or `npm run start:distributed`), in the background as in its own terminal, with only the
 * environment a fresh shell has: so it must say `SLUICE_ALLOW_PRIVATE_NETWORKS=true` itself
 * (the other shape's start, run by the other pass, is read to say so too).
 * The example receiver runs by its block (`npm run receiver`) in the background too; every
 * other block runs in order in one shell (helpers/shell.ts) under `set -euo pipefail`.
 *
 * What a reader's machine has and this one may not, replaced in the text before it runs:
 * ports 3000-3002 and 4000 by free ones; the database, Redis URL and key prefix the
 * distributed start names, and `data/admin-token`, by the fresh state's; and the 1,000
 * events by 60 (3 s at the limit, not 50).
 *
 * Then: every block exited 0, the receiver got every event with a good signature and never
 * more than the limit in a sliding second, and the stats agree.
 */

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { childState, SHAPE } from './helpers/shape.ts';
import { type Background, type Block, background, session, shBlocks } from './helpers/shell.ts';
import { freePort, tempDir, waitUntil } from './helpers/sluice.ts';

const README = new URL('../README.md', import.meta.url);
const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));
const EVENTS = 60;

/** The walk-through's blocks: from the "Try it" heading to the one after "The distributed shape". */
function walkThrough(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const from = lines.findIndex((l) => l.startsWith('## Try it'));
  const shape = lines.findIndex((l) => l.startsWith('## The distributed shape'));
  assert.ok(from >= 0 && shape > from, 'the README has "## Try it" and then "## The distributed shape"');
  const next = lines.findIndex((l, i) => i > shape && l.startsWith('## '));
  const blocks = shBlocks(lines.slice(from, next < 0 ? undefined : next).join('\n'));
  return blocks.map((b) => ({ ...b, line: b.line + from }));
}

it(`README: the walk-through runs as written (${SHAPE} shape)`, { timeout: 180_000 }, async (t) => {
  assert.equal(
    spawnSync('jq', ['--version']).status,
    0,
    'jq is not installed: the README needs it (Debian: apt-get install jq; .ci/run installs it)',
  );
  const markdown = await readFile(README, 'utf8');
  const blocks = walkThrough(markdown);
  const starts = {
    single: blocks.find((b) => /\bnpm start\b/.test(b.code)),
    distributed: blocks.find((b) => /\bnpm run start:distributed\b/.test(b.code)),
  };
  const start = starts[SHAPE];
  assert.ok(start, `the walk-through's start command for the ${SHAPE} shape`);
  // The other shape's start is run by the other pass; this one reads it.
  const other = starts[SHAPE === 'single' ? 'distributed' : 'single'];
  assert.match(
    other?.code ?? '',
    /(^|\s)SLUICE_ALLOW_PRIVATE_NETWORKS=true (\S+=\S+ |\\\n\s*)*npm /,
    'both starts allow loopback',
  );
  // The repository's Node.js runs the services' `.ts` files; a machine's older `node` does not.
  assert.doesNotMatch(markdown, /(?<!npx )\bnode services\//, 'services started as `npx node services/…`');
  const receiverBlock = blocks.find((b) => b.code.includes('npm run receiver'));
  assert.ok(receiverBlock, "the walk-through's receiver command");
  const steps = blocks.filter((b) => b !== starts.single && b !== starts.distributed && b !== receiverBlock);
  assert.ok(steps.length >= 3, `only ${steps.length} steps in the walk-through`);

  const state = await childState();
  const dir = await tempDir();
  const running: Background[] = [];
  t.after(async () => {
    for (const b of running.reverse()) await b.stop();
    await state.close();
    await rm(dir, { recursive: true, force: true });
  });
  const [port, receiverPort, rateLimiterPort, workerPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  // The distributed start names a database, a Redis URL and a key prefix of its own: the state's.
  const own = (name: string, value: string): [string, string, string] => [
    `${name}=${value}`,
    `${name}=${state.env[name] ?? 'unused'}`,
    `the ${name} it gives`,
  ];
  const substitutions: [string, string, string][] = [
    ['127.0.0.1:3000', `127.0.0.1:${port}`, "Sluice's address"],
    ['PORT=3000', `PORT=${port}`, "the API's port"],
    ['RATE_LIMITER_PORT=3001', `RATE_LIMITER_PORT=${rateLimiterPort}`, "the rate limiter's port"],
    ['DELIVERY_WORKER_PORT=3002', `DELIVERY_WORKER_PORT=${workerPort}`, "the delivery worker's port"],
    own('DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/sluice_try'),
    own('REDIS_URL', 'redis://127.0.0.1:6379/0'),
    own('SLUICE_REDIS_PREFIX', 'sluice-try'),
    ['127.0.0.1:4000', `127.0.0.1:${receiverPort}`, "the receiver's address"],
    ['data/admin-token', join(state.env.SLUICE_DATA_DIR as string, 'admin-token'), 'the admin token file'],
    ['range(1000)', `range(${EVENTS})`, 'the 1,000 events'],
  ];
  const all = blocks.map((b) => b.code).join('\n');
  for (const [from, , what] of substitutions) {
    assert.ok(all.includes(from), `the walk-through no longer has ${what} (${from}): update this test`);
  }
  const adapt = (code: string): string =>
    substitutions.reduce((out, [from, to]) => out.replaceAll(from, to), code);

  // A fresh shell's environment: no SLUICE_* but the state's, no proxies, no curlrc.
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    LC_ALL: 'C.UTF-8',
    npm_config_update_notifier: 'false',
    ...state.env,
    PORT: String(port),
    RATE_LIMITER_PORT: String(rateLimiterPort),
    DELIVERY_WORKER_PORT: String(workerPort),
    SLUICE_LOG_LEVEL: 'warn',
  };
  const sluice = background(adapt(start.code), env, REPO_ROOT);
  running.push(sluice);
  await waitUntil(
    async () => {
      if (!sluice.alive()) throw new Error(`Sluice exited:\n${sluice.lines.join('\n')}`);
      try {
        const res = await request(`http://127.0.0.1:${port}/readyz`);
        await res.body.dump();
        return res.statusCode === 200;
      } catch {
        return false; // not listening yet
      }
    },
    60_000,
    `Sluice ready on :${port} (started by README line ${start.line})`,
    200,
  );

  const sh = await session(dir, env, REPO_ROOT);
  let receiver: Background | undefined;
  const outputs: string[] = [];
  for (const block of blocks) {
    if (block !== receiverBlock && !steps.includes(block)) continue;
    if (block === receiverBlock) {
      const { SECRET } = await sh.vars('SECRET');
      assert.match(SECRET ?? '', /^whsec_/, 'the steps before the receiver set SECRET');
      receiver = background(
        `source "$GUIDE_STATE"\n${adapt(block.code)}`,
        { ...env, GUIDE_STATE: sh.state, RECEIVER_PORT: String(receiverPort) },
        REPO_ROOT,
      );
      running.push(receiver);
      await receiver.waitFor(
        /^receiver on .*signatures checked/,
        30_000,
        `the receiver (README line ${block.line})`,
      );
      continue;
    }
    const run = await sh.run(adapt(block.code), 30_000);
    outputs.push(run.stdout);
    assert.equal(
      run.code,
      0,
      `README line ${block.line} exited ${run.code ?? run.signal}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}\n--- Sluice\n${sluice.lines.slice(-30).join('\n')}`,
    );
  }
  assert.ok(receiver, 'the receiver ran');

  const printed = outputs.join('');
  assert.ok(printed.includes(`{"accepted":${EVENTS}}`), `the batch was accepted:\n${printed}`);
  const last = await receiver.waitFor(
    new RegExp(`^received ${EVENTS} `),
    60_000,
    `${EVENTS} arrivals at the receiver`,
  );
  const m = /most in any sliding second: (\d+) {2}bad signatures: (\d+)/.exec(last);
  assert.ok(m, last);
  assert.ok(Number(m[1]) <= 20, `at most 20 in a sliding second at the receiver: ${last}`);
  assert.equal(Number(m[2]), 0, `every signature good: ${last}`);

  const { KEY, DST } = await sh.vars('KEY', 'DST');
  const res = await request(`http://127.0.0.1:${port}/v1/destinations/${DST}/stats?seconds=300`, {
    headers: { authorization: `Bearer ${KEY}` },
  });
  const stats = (await res.body.json()) as { delivered: number; maxSentInAnyWindow: number };
  assert.equal(res.statusCode, 200, JSON.stringify(stats));
  assert.equal(stats.delivered, EVENTS, 'the stats count every event delivered');
  assert.ok(stats.maxSentInAnyWindow <= 20, `maxSentInAnyWindow ${stats.maxSentInAnyWindow}`);
});
