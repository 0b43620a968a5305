/**
 * docs/api.md, run: every ```sh block of the guide, in order, with bash, against a single
 * box in-process and a recording receiver, so that what a reader pastes is exactly what is
 * tested. Each block is its own `bash -c` under `set -euo pipefail`; the variables and
 * functions the blocks define are carried from one to the next through a state file (as
 * one interactive shell would keep them). The guide reads its addresses from `SLUICE`,
 * `ADMIN` and `RECEIVER` when they are set, and the test sets them: it talks to 127.0.0.1
 * only, with no proxy variables and no curlrc.
 *
 * Then the outcomes: each block exited 0, the receiver got what the guide says it sends
 * (signed, within the limit, fanned out by type, replayed), the values the guide prints
 * are the ones it says, and its hand-made signature matches a real one.
 */

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { headersOf } from './helpers/client.ts';
import { harness, tempDir } from './helpers/sluice.ts';
import { worstWindow } from './helpers/window.ts';

const GUIDE = new URL('../docs/api.md', import.meta.url);
const BLOCK_TIMEOUT_MS = 20_000;

interface Block {
  /** The `##` heading above the block (the title above the first one). */
  heading: string;
  /** 1-based line of the opening fence in the guide. */
  line: number;
  code: string;
}

/** The ```sh blocks of a markdown text, in order. */
function shBlocks(markdown: string): Block[] {
  const out: Block[] = [];
  let heading = '';
  let open: { line: number; lines: string[] } | undefined;
  for (const [i, line] of markdown.split('\n').entries()) {
    if (open) {
      if (line.startsWith('```')) {
        out.push({ heading, line: open.line, code: open.lines.join('\n') });
        open = undefined;
      } else open.lines.push(line);
    } else if (line === '```sh') open = { line: i + 1, lines: [] };
    else if (/^#{1,2} /.test(line)) heading = line.replace(/^#+ /, '');
  }
  assert.equal(open, undefined, `a block opened at line ${open?.line} is never closed`);
  return out;
}

/** The shell variables (UPPER_CASE) a block assigns. */
const assigned = (code: string): string[] => [...code.matchAll(/^\s*([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!);

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** `bash -c script` in its own process group, killed (with its curls) past the time limit. */
function bash(script: string, env: Record<string, string>, cwd: string, args: string[] = []): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script, 'guide', ...args], { env, cwd, detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    }, BLOCK_TIMEOUT_MS);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

it('docs/api.md: every sh block runs, in order, and does what the guide says', {
  timeout: 120_000,
}, async (t) => {
  const { box, rcv } = await harness(t);
  const dir = await tempDir();
  t.after(() => rm(dir, { recursive: true, force: true }));
  const state = join(dir, 'state.sh');
  await writeFile(state, '');
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    LC_ALL: 'C.UTF-8',
    GUIDE_STATE: state,
    SLUICE: box.url,
    ADMIN: box.adminToken,
    RECEIVER: `${rcv.origin}/d`,
  };

  const blocks = shBlocks(await readFile(GUIDE, 'utf8'));
  assert.ok(blocks.length >= 15, `only ${blocks.length} sh blocks in the guide`);
  const names = new Set<string>();
  const outputs = new Map<string, string>();
  let failed: string | undefined;
  for (const [n, block] of blocks.entries()) {
    const title = `block ${n + 1} (line ${block.line}): ${block.heading}`;
    await t.test(title, { skip: failed && `${failed} failed` }, async () => {
      for (const name of assigned(block.code)) names.add(name);
      // Keep what the block defined for the next one: its variables and every function.
      const save = `{ declare -p ${[...names].join(' ')} 2>/dev/null; declare -f; } > "$GUIDE_STATE.next" || true
mv "$GUIDE_STATE.next" "$GUIDE_STATE"`;
      const script = `set -euo pipefail\nsource "$GUIDE_STATE"\n${block.code}\n${save}\n`;
      const run = await bash(script, env, dir);
      outputs.set(block.heading, (outputs.get(block.heading) ?? '') + run.stdout);
      if (run.code !== 0) failed = `block ${n + 1}`;
      assert.equal(
        run.code,
        0,
        `${title} exited ${run.code ?? run.signal}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`,
      );
    });
  }
  assert.equal(failed, undefined, `${failed} failed: the outcomes are not checked`);

  /** The values the guide's variables ended with. */
  const vars = async (...wanted: string[]): Promise<Record<string, string>> => {
    const print = wanted.map((name) => `printf '%s\\0' "$${name}"`).join('; ');
    const run = await bash(`source "$GUIDE_STATE"; ${print}`, env, dir);
    assert.equal(run.code, 0, run.stderr);
    const values = run.stdout.split('\0');
    return Object.fromEntries(wanted.map((name, i) => [name, values[i] ?? '']));
  };
  const v = await vars(
    'SECRET',
    'NEW_SECRET',
    'FIRST',
    'AGAIN',
    'HELD_STATUS',
    'CANCELLED',
    'REPLAYED',
    'PAGES',
  );
  const stats = JSON.parse((await vars('STATS')).STATS!) as Record<string, number>;

  await t.test('the values the guide prints are the ones it says', () => {
    assert.match(v.FIRST!, /^evt_/);
    assert.equal(v.AGAIN, v.FIRST, 'the same idempotency key answers the same event');
    assert.equal(v.HELD_STATUS, 'pending', 'a paused destination holds its deliveries');
    assert.equal(v.CANCELLED, 'cancelled', 'deleting a destination cancels what it had not sent');
    assert.deepEqual(JSON.parse(v.REPLAYED!), { count: 2 }, 'one retried, two replayed');
    assert.ok(Number(v.PAGES) >= 3, `the walk took ${v.PAGES} pages of 25 over 60+ deliveries`);
    assert.ok(stats.delivered! >= 60, `stats: delivered ${stats.delivered}`);
    assert.ok(
      stats.maxSentInAnyWindow! > 0 && stats.maxSentInAnyWindow! <= 20,
      `maxSentInAnyWindow ${stats.maxSentInAnyWindow}`,
    );
    const errors = outputs.get('Errors') ?? '';
    for (const code of ['validation_failed', 'unauthorized', 'forbidden', 'not_found']) {
      assert.ok(errors.includes(`"code":"${code}"`), `the errors block shows ${code}:\n${errors}`);
    }
    assert.ok(errors.includes('"paths":["url","rateLimit.limit","rateLimit.period","colour"]'), errors);
    const lowered = outputs.get('Change the limit live') ?? '';
    assert.ok(
      lowered.includes('the naive check: false'),
      `after a lower limit the naive check fails:\n${lowered}`,
    );
    const dead = outputs.get('Dead deliveries: replay, or retry one') ?? '';
    assert.ok(dead.includes('{"status":"delivered","attempts":[404,200]}'), dead);
  });

  await t.test('the receiver got every event, signed, within the limit, by type', () => {
    const orders = rcv.arrivals(rcv.path('orders'));
    const everything = rcv.arrivals(rcv.path('everything'));
    assert.ok(orders.length >= 60, `${orders.length} requests to orders`);
    for (const a of orders) {
      assert.equal(a.status, 200);
      // The old secret signs beside the new one for 24 h: it verifies every request.
      new Webhook(v.SECRET!).verify(a.body, headersOf(a));
    }
    const rotated = orders.filter((a) => String(a.headers['webhook-signature']).split(' ').length === 2);
    assert.ok(rotated.length >= 1, 'after the rotation, two signatures');
    for (const a of rotated) new Webhook(v.NEW_SECRET!).verify(a.body, headersOf(a));
    assert.ok(
      worstWindow(rcv.times(rcv.path('orders')), 1_000).count <= 20,
      'at most 20 in any second at the receiver',
    );
    const typesAt = (arrivals: typeof orders) =>
      new Set(arrivals.map((a) => a.headers['webhook-event-type']));
    assert.ok(!typesAt(orders).has('user.created'), 'user.created does not match order.*');
    assert.ok(typesAt(everything).has('user.created') && typesAt(everything).has('order.paid'));
    assert.ok(!typesAt(everything).has('user.deleted'), 'the cancelled delivery was never sent');
    // The retried one and the two replayed (and perhaps already the admin's invoice.paid).
    assert.ok(rcv.deliveredIds(rcv.path('billing')).size >= 3, 'the dead deliveries went out again');
  });

  await t.test("the guide's webhook_signature matches a real request's", async () => {
    const a = rcv.arrivals(rcv.path('orders'))[0]!;
    const h = headersOf(a);
    const run = await bash('source "$GUIDE_STATE"; webhook_signature "$@"', env, dir, [
      v.SECRET!,
      h['webhook-id']!,
      h['webhook-timestamp']!,
      a.body,
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(`v1,${run.stdout.trim()}`, h['webhook-signature']);
  });
});
