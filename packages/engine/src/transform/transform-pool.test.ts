import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { TransformPool } from './transform-pool.ts';

const input = JSON.stringify({
  type: 'order.paid',
  payload: { amount: 120, id: 7 },
  headers: { 'x-a': '1' },
});

describe('TransformPool', () => {
  const pool = new TransformPool({ threads: 1, timeoutMs: 50, memoryBytes: 16 * 1024 * 1024 });
  after(() => pool.close());

  test('calls the handler with the webhook and answers its return value', async () => {
    const code = `function handler(webhook) {
  return { payload: { text: webhook.type + ' ' + webhook.payload.amount }, headers: { ...webhook.headers, 'x-b': '2' } };
}`;
    const result = await pool.run('dst_1', code, input, 0);
    assert.deepEqual(result, {
      ok: true,
      output: '{"payload":{"text":"order.paid 120"},"headers":{"x-a":"1","x-b":"2"}}',
    });
  });

  test('a syntax error, a missing handler and a throw are failures with the line', async () => {
    assert.deepEqual(await pool.check('function handler(w) {\n  return {\n'), {
      ok: false,
      message: 'SyntaxError: invalid property name',
      line: 3,
    });
    assert.deepEqual(await pool.check('const x = 1;'), {
      ok: false,
      message: 'defines no function handler(webhook)',
    });
    assert.deepEqual(await pool.check('const handler = (w) => w;'), { ok: true, output: '' });
    const thrown = await pool.run(
      'dst_2',
      'function handler(w) {\n  throw new Error("no amount");\n}',
      input,
      0,
    );
    assert.deepEqual(thrown, { ok: false, message: 'Error: no amount', line: 2 });
    const top = await pool.check('throw new RangeError("at the top")\nfunction handler(w) { return w }');
    assert.deepEqual(top, { ok: false, message: 'RangeError: at the top', line: 1 });
  });

  test('has no host: no process, require, fetch, timers or console; the clock and random are fixed', async () => {
    const code = `function handler() {
  return [typeof process, typeof require, typeof fetch, typeof setTimeout, typeof setInterval,
    typeof console, typeof WebAssembly, typeof globalThis.process, Date.now(), new Date().getTime(),
    Math.random() === Math.random()];
}`;
    const first = await pool.run(undefined, code, input, 1_700_000_000_000);
    assert.equal(first.ok, true);
    const seen = JSON.parse((first as { output: string }).output) as unknown[];
    assert.deepEqual(seen.slice(0, 8), Array(8).fill('undefined'));
    assert.deepEqual(seen.slice(8), [1_700_000_000_000, 1_700_000_000_000, false]);
    // No way back to the real clock through a date's constructor.
    const viaConstructor = await pool.run(
      undefined,
      'function handler() { const D = new Date().constructor; return [D.now(), new D().getTime(), Date.prototype.constructor.now()] }',
      input,
      5,
    );
    assert.deepEqual(viaConstructor, { ok: true, output: '[5,5,5]' });
    // The same call at the same time answers the same: a replay is deterministic.
    assert.deepEqual(await pool.run(undefined, code, input, 1_700_000_000_000), first);
  });

  test('a loop is stopped at its time limit; an allocation loop at its hard stop; others go on', async () => {
    const started = Date.now();
    const looping = pool.run('dst_loop', 'function handler(w) { while (true) {} }', input, 0);
    const allocating = pool.run(
      'dst_alloc',
      'function handler(w) { const kept = []; while (true) { try { kept.push(new Array(1e6).fill(1)) } catch (e) {} } }',
      input,
      0,
    );
    const healthy = pool.run('dst_ok', 'function handler(w) { return w }', input, 0);
    const loop = await looping;
    assert.equal(loop.ok, false);
    // Its 50 ms of CPU, or the hard stop first on a machine too busy to give it them.
    assert.match((loop as { message: string }).message, /^(ran out of time|stopped after \d+ ms)/);
    const alloc = await allocating;
    assert.equal(alloc.ok, false);
    assert.match((alloc as { message: string }).message, /^(ran out of (time|memory)|stopped after \d+ ms)/);
    assert.equal((await healthy).ok, true);
    // Within a wide margin of the hard stop (300 ms) and the thread's restart.
    assert.ok(Date.now() - started < 5_000, `${Date.now() - started} ms`);
  });

  test('a transform past its limits twice in a row is not run again until its code changes', async () => {
    const code = 'function handler(w) { for (;;) {} }';
    assert.equal((await pool.run('dst_q', code, input, 0)).ok, false);
    assert.equal((await pool.run('dst_q', code, input, 0)).ok, false);
    const started = Date.now();
    const third = await pool.run('dst_q', code, input, 0);
    assert.match(
      (third as { message: string }).message,
      /^not run: it exceeded its limits in its last 2 calls/,
    );
    assert.ok(Date.now() - started < 40, 'refused without running');
    assert.equal((await pool.run('dst_q', 'function handler(w) { return w }', input, 0)).ok, true);
  });

  test("a destination's backlog of hostile calls holds another's call for one hard stop at most", async () => {
    const code =
      'function handler(w) { const k = []; for (;;) { try { k.push(new Array(1e6).fill(1)) } catch (e) {} } }';
    const flood = Array.from({ length: 20 }, () => pool.run('dst_flood', code, input, 0));
    const started = Date.now();
    const healthy = await pool.run('dst_fine', 'function handler(w) { return w }', input, 0);
    const waited = Date.now() - started;
    assert.equal(healthy.ok, true);
    const results = await Promise.all(flood);
    const refused = results.filter((r) => !r.ok && r.message.startsWith('not run:')).length;
    assert.ok(refused >= 18, `${refused} of 20 refused without running: the first two quarantined it`);
    // Twice the time limit (100 ms), when the hostile call's thread is set aside, with a wide
    // margin for a loaded machine; not the hard stop (300 ms) each of the two it ran.
    assert.ok(waited < 600, `the healthy call waited ${waited} ms`);
  });

  test("a tenant's many destinations take one turn: another tenant's call goes after a few of theirs", async () => {
    // 20 destinations of one tenant, each call ~20 ms of work; then another tenant's call.
    const slow =
      'function handler(w) { let n = 0; for (let i = 0; i < 3e5; i++) n += i; return { payload: n } }';
    const busy = Array.from({ length: 20 }, (_, i) => pool.run(`dst_busy_${i}`, slow, input, 0, 'ten_busy'));
    await new Promise((resolve) => setTimeout(resolve, 5));
    let done = 0;
    for (const b of busy) void b.then(() => done++);
    const other = await pool.run('dst_other', 'function handler(w) { return w }', input, 0, 'ten_other');
    const before = done;
    assert.equal(other.ok, true);
    await Promise.all(busy);
    assert.ok(before <= 8, `${before} of the busy tenant's 20 calls went first`);
  });

  test('state at the top level lives only in its own destination', async () => {
    const code = 'let n = 0; function handler(w) { n++; return { payload: n } }';
    await pool.run('dst_s1', code, input, 0);
    assert.deepEqual(await pool.run('dst_s1', code, input, 0), { ok: true, output: '{"payload":2}' });
    assert.deepEqual(await pool.run('dst_s2', code, input, 0), { ok: true, output: '{"payload":1}' });
  });

  test('a Promise is refused, deep recursion is a RangeError', async () => {
    const promised = await pool.run(undefined, 'async function handler(w) { return w }', input, 0);
    assert.match((promised as { message: string }).message, /handler returned a Promise/);
    const deep = await pool.run(
      undefined,
      'function f(n) { return f(n + 1) }\nfunction handler(w) { return f(0) }',
      input,
      0,
    );
    assert.equal(deep.ok, false);
    assert.match((deep as { message: string }).message, /RangeError|InternalError/);
  });
});
