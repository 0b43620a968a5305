/**
 * docs/portal.md, run: every ```sh block, in order, with bash (helpers/shell.ts, as
 * test/api-guide.test.ts runs docs/api.md), against a box whose portal may be framed by a
 * host page on another loopback origin, as the guide's first step says. After the block that
 * writes the host page, that page is served from its own origin and opened in Chromium: the
 * portal loads inside the iframe, branded, signed in with the link's token. At the end, the
 * revoked link's page says so inside the same iframe; the subscriber got the guide's
 * `sluice.delivery.dead`, signed with its secret, and nothing else.
 */

import assert from 'node:assert/strict';
import { readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { browserMissing, launch, shooter } from './helpers/browser.ts';
import { headersOf } from './helpers/client.ts';
import { session, shBlocks } from './helpers/shell.ts';
import { harness, tempDir, waitUntil } from './helpers/sluice.ts';

const GUIDE = new URL('../docs/portal.md', import.meta.url);
const DOCS_SHOT = new URL('../docs/portal-embedded.png', import.meta.url).pathname;
const why = browserMissing('the portal guide');
const shot = shooter('portal-guide');

/** A static server for one folder, on its own loopback origin: the platform's site. */
async function serveFolder(dir: string): Promise<{ origin: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const name = (req.url ?? '/').split('?')[0]!.replace(/^\/+/, '');
    if (!/^[a-z0-9-]+\.html$/.test(name)) return res.writeHead(404).end();
    readFile(join(dir, name)).then(
      (body) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body),
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

it('docs/portal.md: every sh block runs, the host page frames the portal, the link revokes', {
  skip: why ?? false,
  timeout: 180_000,
}, async (t) => {
  const dir = await tempDir();
  t.after(() => rm(dir, { recursive: true, force: true }));
  const site = await serveFolder(dir);
  t.after(() => site.close());
  // Hooks run in order: the browser closes before the harness checks for leaks.
  const chromium = await launch();
  t.after(() => chromium.close());
  const { box, rcv } = await harness(t, { SLUICE_PORTAL_FRAME_ANCESTORS: site.origin });
  const sh = await session(dir, {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    LC_ALL: 'C.UTF-8',
    SLUICE: box.url,
    ADMIN: box.adminToken,
    RECEIVER: `${rcv.origin}/d`,
  });
  const page = await chromium.browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  const portal = page.frameLocator('iframe[title="Webhooks portal"]');

  const blocks = shBlocks(await readFile(GUIDE, 'utf8'));
  assert.ok(blocks.length >= 6, `only ${blocks.length} sh blocks in the guide`);
  const outputs: string[] = [];
  for (const [n, block] of blocks.entries()) {
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
      `block ${n + 1} (line ${block.line}, ${block.heading}) exited ${run.code ?? run.signal}\n` +
        `--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`,
    );
    if (block.code.includes('portal-host.html')) {
      // The platform's page, on its own origin, frames the portal: branded and signed in.
      await page.goto(`${site.origin}/portal-host.html`);
      await portal.getByText('Acme webhooks').first().waitFor({ timeout: 15_000 });
      await portal.getByRole('heading', { name: 'Destinations' }).waitFor();
      await shot(page, '1-embedded');
    }
  }
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
