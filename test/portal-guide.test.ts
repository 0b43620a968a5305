/**
 * docs/portal.md, run: every ```sh block, in order, with bash (helpers/shell.ts, as
 * test/api-guide.test.ts runs docs/api.md), in a directory laid out as the repository's root
 * is where a reader runs them (a `data/` with the admin token and the encryption key),
 * against a box whose portal may be framed by a host page on another loopback origin, as the
 * guide's first step says. The block that serves the host page runs in the background, as in
 * a terminal of its own, on a free port for 8080: it serves the host page and nothing else
 * (not `data/`, by no path), on 127.0.0.1 only; the page has its viewport line (at a phone's
 * width the page is laid out at that width). Chromium opens it: the portal loads inside the
 * iframe, branded, signed in with the link's token. At the end, the revoked link's page says
 * so inside the same iframe; the subscriber got the guide's `sluice.delivery.dead`, signed
 * with its secret, and nothing else.
 */

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { browserMissing, launch, shooter } from './helpers/browser.ts';
import { headersOf } from './helpers/client.ts';
import { type Background, background, session, shBlocks } from './helpers/shell.ts';
import { freePort, harness, tempDir, waitUntil } from './helpers/sluice.ts';

const GUIDE = new URL('../docs/portal.md', import.meta.url);
const DOCS_SHOT = new URL('../docs/portal-embedded.png', import.meta.url).pathname;
const why = browserMissing('the portal guide');
const shot = shooter('portal-guide');

/** GET `path` exactly as written (no normalising of `..`): the status and the body. */
function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (s: string) => (body += s));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Whether something accepts a TCP connection at `host:port`. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

it('docs/portal.md: every sh block runs, the host page frames the portal, the link revokes', {
  skip: why ?? false,
  timeout: 180_000,
}, async (t) => {
  assert.equal(
    spawnSync('python3', ['--version']).status,
    0,
    'python3 is not installed: docs/portal.md serves the host page with it',
  );
  const dir = await tempDir();
  t.after(() => rm(dir, { recursive: true, force: true }));
  const sitePort = await freePort();
  const siteOrigin = `http://127.0.0.1:${sitePort}`;
  // Hooks run in order: the host page's server and the browser close before the harness
  // checks for leaks.
  let site: Background | undefined;
  t.after(() => site?.stop());
  const chromium = await launch();
  t.after(() => chromium.close());
  const { box, rcv } = await harness(t, { SLUICE_PORTAL_FRAME_ANCESTORS: siteOrigin });
  // The repository's root as a reader has it: what its server must never serve.
  await mkdir(join(dir, 'data'));
  const secrets = { 'admin-token': box.adminToken, 'encryption-key': 'k1:not-to-be-served' };
  for (const [name, value] of Object.entries(secrets)) await writeFile(join(dir, 'data', name), `${value}\n`);
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    LC_ALL: 'C.UTF-8',
    SLUICE: box.url,
    ADMIN: box.adminToken,
    RECEIVER: `${rcv.origin}/d`,
  };
  const sh = await session(dir, env);
  const page = await chromium.browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  const portal = page.frameLocator('iframe[title="Webhooks portal"]');

  const blocks = shBlocks(await readFile(GUIDE, 'utf8'));
  assert.ok(blocks.length >= 7, `only ${blocks.length} sh blocks in the guide`);
  const outputs: string[] = [];
  for (const [n, block] of blocks.entries()) {
    const where = `block ${n + 1} (line ${block.line}, ${block.heading})`;
    if (block.code.includes('http.server')) {
      assert.ok(block.code.includes('8080'), `${where} serves on 8080`);
      const server = background(block.code.replaceAll('8080', String(sitePort)), env, dir);
      site = server;
      await waitUntil(
        async () => {
          if (!server.alive()) throw new Error(`${where} exited:\n${server.lines.join('\n')}`);
          return (await get(sitePort, '/').catch(() => undefined))?.status === 200;
        },
        30_000,
        `the host page served (${where})`,
        100,
      );
      await t.test('the host page is all its server serves, on 127.0.0.1 only', async () => {
        const home = await get(sitePort, '/');
        assert.match(home.body, /<iframe src="[^"]+\/portal\/#token=/, 'the host page at /');
        assert.match(
          home.body,
          /<meta name="viewport" content="width=device-width, initial-scale=1">/,
          'its viewport line',
        );
        for (const name of Object.keys(secrets)) {
          for (const path of [
            `/data/${name}`,
            `/../data/${name}`,
            `/%2e%2e/data/${name}`,
            `/..%2fdata%2f${name}`,
          ]) {
            const res = await get(sitePort, path);
            assert.equal(res.status, 404, `${path}: ${res.status} ${res.body.slice(0, 200)}`);
            assert.ok(!res.body.includes(secrets[name as keyof typeof secrets]), `${path} never shows it`);
          }
        }
        assert.equal(await accepts('127.0.0.2', sitePort), false, 'not on every interface: only 127.0.0.1');
      });
      // The platform's page, on its own origin, frames the portal: branded and signed in.
      await page.goto(`${siteOrigin}/`);
      await portal.getByText('Acme webhooks').first().waitFor({ timeout: 15_000 });
      await portal.getByRole('heading', { name: 'Destinations' }).waitFor();
      await shot(page, '1-embedded');
      const phone = await chromium.browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true });
      await phone.goto(`${siteOrigin}/`);
      assert.equal((await phone.evaluate('window.innerWidth')) as number, 390, 'laid out at the phone width');
      await phone.close();
      continue;
    }
    if (block.code.includes('DELETE "$SLUICE/v1/portal-links')) {
      // Before the link is revoked: the customer's destinations, as the guide left them.
      await page.reload();
      await portal.getByRole('link', { name: 'ops alerts' }).waitFor({ timeout: 15_000 });
      await shot(page, '2-destinations');
      if (process.env.SLUICE_DOCS_SCREENSHOT === '1') await page.screenshot({ path: DOCS_SHOT });
    }
    const run = await sh.run(block.code);
    outputs.push(run.stdout);
    assert.equal(
      run.code,
      0,
      `${where} exited ${run.code ?? run.signal}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`,
    );
  }
  assert.ok(site, "the guide serves the host page (a block with python3's http.server)");
  const v = await sh.vars('OPS_SECRET', 'DEAD', 'PORTAL_URL');
  assert.match(v.PORTAL_URL!, new RegExp(`^${box.url}/portal/#token=`));

  await t.test('the dead delivery reached the subscriber, signed, and nothing else did', async () => {
    const dead = JSON.parse(v.DEAD!) as { type: string; payload: { data: { eventType: string } } };
    assert.equal(dead.type, 'sluice.delivery.dead');
    assert.equal(dead.payload.data.eventType, 'order.paid');
    const ops = rcv.path('ops');
    await waitUntil(async () => rcv.arrivals(ops).length >= 1, 15_000, 'the operational event to arrive');
    for (const a of rcv.arrivals(ops)) {
      const body = new Webhook(v.OPS_SECRET!).verify(a.body, headersOf(a)) as { type: string };
      assert.equal(body.type, 'sluice.delivery.dead');
    }
  });

  await t.test('the revoked link shows its page inside the iframe', async () => {
    await page.reload();
    await portal.getByText(/expired or was revoked/).waitFor({ timeout: 15_000 });
    await shot(page, '3-revoked');
    assert.deepEqual(errors, [], 'no error in the page');
  });

  await t.test('the last block printed 204 then 401', () => {
    assert.match(outputs.at(-1) ?? '', /^204\n401\n$/);
  });
});
