/**
 * docs/api.md, run: every ```sh block of the guide, in order, with bash, against a single
 * box in-process and a recording receiver, so that what a reader pastes is exactly what is
 * tested. Each block is its own `bash -c` under `set -euo pipefail`; the variables and
 * functions the blocks define are carried from one to the next through a state file (as
 * one interactive shell would keep them: helpers/shell.ts). The guide reads its addresses from `SLUICE`,
 * `ADMIN` and `RECEIVER` when they are set, and the test sets them: it talks to 127.0.0.1
 * only, with no proxy variables and no curlrc.
 *
 * Then the outcomes: each block exited 0, the receiver got what the guide says it sends
 * (signed, within the limit, fanned out by type, replayed), the values the guide prints
 * are the ones it says, and its hand-made signature matches a real one.
 */

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { headersOf } from './helpers/client.ts';
import { session, shBlocks } from './helpers/shell.ts';
import { harness, tempDir } from './helpers/sluice.ts';
import { worstWindow } from './helpers/window.ts';

const GUIDE = new URL('../docs/api.md', import.meta.url);

it('docs/api.md: every sh block runs, in order, and does what the guide says', {
  timeout: 120_000,
}, async (t) => {
  assert.equal(
    spawnSync('jq', ['--version']).status,
    0,
    'jq is not installed: the guide needs it (Debian: apt-get install jq; .ci/run installs it)',
  );
  const { box, rcv } = await harness(t);
  const dir = await tempDir();
  t.after(() => rm(dir, { recursive: true, force: true }));
  const sh = await session(dir, {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    LC_ALL: 'C.UTF-8',
    SLUICE: box.url,
    ADMIN: box.adminToken,
    RECEIVER: `${rcv.origin}/d`,
  });

  // The guide's OAuth2 token endpoint ($RECEIVER/oauth/token), as the example receiver answers.
  const token = { access_token: 'at_guide_1', token_type: 'Bearer', expires_in: 3_600 };
  await rcv.script(rcv.path('oauth/token'), [
    { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(token) },
  ]);

  const blocks = shBlocks(await readFile(GUIDE, 'utf8'));
  assert.ok(blocks.length >= 15, `only ${blocks.length} sh blocks in the guide`);
  const outputs = new Map<string, string>();
  let failed: string | undefined;
  for (const [n, block] of blocks.entries()) {
    const title = `block ${n + 1} (line ${block.line}): ${block.heading}`;
    await t.test(title, { skip: failed && `${failed} failed` }, async () => {
      const run = await sh.run(block.code);
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

  const v = await sh.vars(
    'SECRET',
    'NEW_SECRET',
    'FIRST',
    'AGAIN',
    'HELD_STATUS',
    'CANCELLED',
    'REPLAYED',
    'PAGES',
  );
  const stats = JSON.parse((await sh.vars('STATS')).STATS!) as Record<string, number>;

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
    const quotas = outputs.get('Tenant quotas') ?? '';
    assert.ok(quotas.includes('"code":"rate_limited"') && quotas.includes('retry-after 1'), quotas);
    assert.ok(quotas.includes('{"eventsPerSecond":null,"pendingEvents":null}'), quotas);
    const whoami = outputs.get('Who am I') ?? '';
    assert.ok(whoami.includes('{"role":"tenant","tenant":"acme"}'), whoami);
    assert.ok(whoami.includes('{"role":"admin","tenant":null,"portal":null}'), whoami);
    const tested = outputs.get('Test event') ?? '';
    assert.ok(tested.includes('{"type":"sluice.test","toThisOnly":true}'), tested);
    const portal = outputs.get('Portal links') ?? '';
    for (const line of [
      `${box.url}/portal/#token=…`,
      '["portal","read"]',
      '1',
      'forbidden',
      '204',
      'unauthorized',
    ])
      assert.ok(portal.split('\n').includes(line), `the portal links block prints ${line}:\n${portal}`);
    const credentials = outputs.get('Custom headers and credentials') ?? '';
    for (const line of [
      '{"headers":{"X-Partner-Account":"acme-42"},"auth":{"type":"bearer"}}',
      '{"type":"bearer"}',
      '{"code":"validation_failed","paths":["headers.Authorization"]}',
    ])
      assert.ok(
        credentials.split('\n').includes(line),
        `the credentials block prints ${line}:\n${credentials}`,
      );
    assert.ok(!credentials.includes('tok_partner'), 'no answer shows the token');
    const oauth = outputs.get('OAuth2 client credentials') ?? '';
    assert.ok(
      oauth
        .split('\n')
        .includes('{"type":"oauth2_client_credentials","clientId":"sluice","scope":"webhooks"}'),
      oauth,
    );
    const filters = (outputs.get('Filters') ?? '').split('\n');
    assert.deepEqual(
      filters.slice(0, 3),
      ['true', 'false', '{"code":"validation_failed","paths":["filter"]}'],
      filters.join('\n'),
    );
    // Its Preview subsection's block prints after the first one's line.
    const transforms = (outputs.get('Transforms') ?? '').split('\n');
    assert.equal(transforms[0], '{"path":"transform.code","line":3}', transforms.join('\n'));
    const slack = rcv.arrivals(rcv.path('slack')).map((a) => a.body);
    assert.deepEqual(
      slack,
      ['{"text":"Order ord_7 paid: 250 EUR"}'],
      'the Slack-style receiver got the reshaped body',
    );
    assert.deepEqual(
      transforms.slice(1, 4),
      [
        '[true,{"text":"Order ord_8 paid: 9 USD"}]',
        '[null,"transform_cancelled"]',
        '{"code":"transform_failed","message":"TypeError: cannot read property \'b\' of undefined (line 2)"}',
      ],
      transforms.join('\n'),
    );
    const mtls = outputs.get('Mutual TLS') ?? '';
    for (const line of [
      '{"client":{"subject":"CN=sluice","issuer":"CN=Partner CA"},"ca":"CN=Partner CA"}',
      '{"code":"validation_failed","paths":["tls.clientKey"]}',
    ])
      assert.ok(mtls.split('\n').includes(line), `the mutual TLS block prints ${line}:\n${mtls}`);
    assert.ok(!mtls.includes('PRIVATE KEY'), 'no answer shows the key');
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

  await t.test('the partner destination sent its headers and its token', () => {
    const [first] = rcv.arrivals(rcv.path('partner'));
    assert.ok(first, 'the partner event arrived');
    assert.equal(first.headers.authorization, 'Bearer tok_partner_1');
    assert.equal(first.headers['x-partner-account'], 'acme-42');
  });

  await t.test('the filtered destination got only the event that matched', async () => {
    await rcv.waitFor(
      () => rcv.arrivals(rcv.path('big-orders')).some((a) => a.complete),
      10_000,
      'big-orders',
    );
    const got = rcv.arrivals(rcv.path('big-orders')).map((a) => JSON.parse(a.body) as { amount: number });
    assert.deepEqual(
      got.map((p) => p.amount),
      [250],
    );
  });

  await t.test('the OAuth2 destination asked for a token once and sent it', () => {
    const asked = rcv.arrivals(rcv.path('oauth/token'));
    assert.equal(asked.length, 1, 'one token request');
    assert.equal(
      asked[0]?.headers.authorization,
      `Basic ${Buffer.from('sluice:cs_demo').toString('base64')}`,
    );
    assert.equal(asked[0]?.body, 'grant_type=client_credentials&scope=webhooks');
    const [first] = rcv.arrivals(rcv.path('partner-oauth'));
    assert.equal(first?.headers.authorization, 'Bearer at_guide_1');
  });

  await t.test("the guide's webhook_signature matches a real request's", async () => {
    const a = rcv.arrivals(rcv.path('orders'))[0]!;
    const h = headersOf(a);
    const run = await sh.read('webhook_signature "$@"', [
      v.SECRET!,
      h['webhook-id']!,
      h['webhook-timestamp']!,
      a.body,
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(`v1,${run.stdout.trim()}`, h['webhook-signature']);
  });
});
