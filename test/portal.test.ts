/**
 * The customer portal's page (the dashboard's bundle in portal mode), in real headless
 * Chromium (Debian's, driven by playwright-core), embedded in an iframe of a host page on
 * another loopback origin, at phone width: the link's token is taken from the fragment, kept in
 * sessionStorage only (no cookie, no localStorage) and the fragment becomes `#/`; the branding
 * (title, accent colour, logo) applies; a `manage` link adds a destination choosing event types
 * from the catalog (`sluice.delivery.dead` included), edits its limit, period, burst and
 * concurrency, pauses and resumes it, shows and rotates its secret, sends a test event, opens a
 * delivery's request and response, replays a dead one; every control is reached by Tab in
 * document order with a visible focus ring and every input is labelled; a `read` link shows
 * the same with no write control; a revoked link shows its full page.
 *
 * Screenshots go to `test-artifacts/portal/` (git-ignored);
 * `SLUICE_DOCS_SCREENSHOT=1` also writes the README's `docs/portal.png`.
 */

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import type { Frame, FrameLocator, Page } from 'playwright-core';
import { browserMissing, launch, shooter } from './helpers/browser.ts';
import { createTenant, getDelivery, harness, postEvent, type TestBox, waitUntil } from './helpers/sluice.ts';

const why = browserMissing('the portal browser test');
const shot = shooter('portal');
const DOCS_SHOT = new URL('../docs/portal.png', import.meta.url).pathname;
const LOGO =
  'data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22 width=%2228%22 height=%2228%22%3E%3Ccircle cx=%2214%22 cy=%2214%22 r=%2212%22 fill=%22%237b2ff7%22/%3E%3C/svg%3E';
const BRANDING = { title: 'Acme webhooks', accentColor: '#7b2ff7', logoUrl: LOGO };

interface Link {
  url: string;
  revoke(): Promise<void>;
}

/** A portal link from the API. */
async function portalLink(
  box: TestBox,
  tenant: { id: string; apiKey: string },
  access: 'read' | 'manage',
  destinationIds: string[] | null = null,
): Promise<Link> {
  const res = await box.api<{ id: string; url: string }>(
    'POST',
    '/v1/portal-links',
    { access, expiresInSeconds: 900, branding: BRANDING, ...(destinationIds ? { destinationIds } : {}) },
    tenant.apiKey,
  );
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return {
    url: res.body.url,
    revoke: async () => {
      const gone = await box.api('DELETE', `/v1/portal-links/${res.body.id}`, undefined, tenant.apiKey);
      assert.equal(gone.status, 204);
    },
  };
}

/**
 * A host page on another loopback origin (`localhost` beside the API's `127.0.0.1`) that
 * embeds `frame.src` in an iframe; started first, so that the box can name its origin.
 */
async function hostPage() {
  const frame = { src: 'about:blank' };
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<!doctype html><meta charset="utf-8"><title>Acme settings</title><h1>Acme — settings</h1>
      <iframe title="Webhooks" src="${frame.src}" style="width:100%;height:760px;border:0"></iframe>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    frame,
    origin: `http://localhost:${port}`,
    url: `http://localhost:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Tab through the portal: each stop focused in document order, with a visible ring. */
async function tabOrder(page: Page, frame: Frame, stops: number) {
  // A click on the title (nothing interactive) starts the sequential focus there.
  await frame.locator('h1').first().click();
  let previous = '';
  for (let i = 0; i < stops; i++) {
    await page.keyboard.press('Tab');
    const focus = (await frame.evaluate(`(() => {
      const el = document.activeElement;
      if (!el || el === document.body) return null;
      const all = [...document.querySelectorAll('*')];
      const style = getComputedStyle(el);
      return { index: all.indexOf(el), tag: el.tagName, text: (el.textContent || el.getAttribute('name') || '').trim().slice(0, 30),
               ring: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0 };
    })()`)) as { index: number; tag: string; text: string; ring: boolean } | null;
    if (focus === null) break;
    assert.ok(focus.ring, `a visible focus ring on ${focus.tag} "${focus.text}"`);
    const order = `${focus.index}`;
    if (previous !== '')
      assert.ok(Number(order) > Number(previous), `Tab follows the document: ${focus.text}`);
    previous = order;
  }
}

/** Every input and select of the page has a label (a <label>, aria-label or aria-labelledby). */
async function everyInputLabelled(frame: Frame) {
  const unlabelled = (await frame.evaluate(`[...document.querySelectorAll('input, select, textarea')]
    .filter((el) => el.labels.length === 0 && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby'))
    .map((el) => el.outerHTML.slice(0, 80))`)) as string[];
  assert.deepEqual(unlabelled, [], 'every input is labelled');
}

/** The token in the frame's sessionStorage, and how much localStorage holds (storage may be refused). */
async function stored(frame: Frame) {
  return (await frame.evaluate(`(() => {
    try {
      return { refused: false, token: sessionStorage.getItem('sluice.portal.token'), localStorage: localStorage.length };
    } catch {
      return { refused: true, token: null, localStorage: 0 };
    }
  })()`)) as { refused: boolean; token: string | null; localStorage: number };
}

const frameOf = async (page: Page): Promise<{ frame: Frame; ui: FrameLocator }> => {
  const ui = page.frameLocator('iframe[title="Webhooks"]');
  await ui.locator('#app').waitFor();
  const frame = page.frames().find((f) => f.url().includes('/portal/'));
  assert.ok(frame, 'the portal frame');
  return { frame, ui };
};

describe('the customer portal page', { skip: why ?? false }, () => {
  it('embedded at phone width: manage, read, revoked', { timeout: 240_000 }, async (t) => {
    const host = await hostPage();
    // The API lets the host's origin frame the portal (a setting that comes with portal links).
    const { box, rcv } = await harness(t, { SLUICE_PORTAL_FRAME_ANCESTORS: host.origin }).catch(
      async (err: unknown) => {
        await host.close();
        throw err;
      },
    );
    const { browser, close } = await launch();
    try {
      const tenant = await createTenant(box, box.adminToken, 'acme');
      const type = await box.api(
        'POST',
        '/v1/event-types',
        { name: 'order.paid', description: 'An order was paid.', example: { order: 1 } },
        box.adminToken,
      );
      assert.equal(type.status, 201);
      const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (err) => errors.push(err.message));
      const manage = await portalLink(box, tenant, 'manage');
      host.frame.src = manage.url;
      await page.goto(host.url);
      const { frame, ui } = await frameOf(page);

      // The token: from the fragment to sessionStorage; the fragment becomes #/; no cookie.
      await ui.getByRole('heading', { name: 'Destinations' }).waitFor();
      assert.equal(new URL(frame.url()).hash, '#/');
      const token = new URL(manage.url).hash.replace('#token=', '');
      // A browser may refuse storage to a page framed by another site: then the page's memory.
      const kept = await stored(frame);
      if (kept.refused)
        t.diagnostic('sessionStorage refused to the framed portal: the token is in its memory');
      else assert.equal(kept.token, token);
      assert.equal(kept.localStorage, 0, 'nothing in localStorage');
      assert.equal(await frame.evaluate('document.cookie'), '', 'no cookie');
      assert.deepEqual(await context.cookies(), []);
      // Branding: the title, the accent as a CSS variable, the logo; nothing of the operator's.
      assert.equal(await frame.evaluate('document.title'), 'Acme webhooks');
      assert.equal(
        await frame.evaluate(
          `getComputedStyle(document.documentElement).getPropertyValue('--accent').trim()`,
        ),
        '#7b2ff7',
      );
      assert.equal(await ui.locator('.brand img').getAttribute('src'), LOGO);
      assert.equal(await ui.getByText('Acme webhooks').count(), 1);
      assert.equal(await ui.getByRole('button', { name: 'Sign out' }).count(), 0);
      assert.equal(await ui.getByRole('link', { name: 'Dead letters' }).count(), 0);
      await shot(page, '1-embedded');

      // Add a destination, choosing its event types from the catalog.
      await ui.getByRole('button', { name: 'New destination' }).click();
      const form = ui.locator('form.new-destination');
      await form.getByLabel('Name').fill('hooks');
      await form.getByLabel('URL').fill(rcv.url('hooks'));
      await form.getByRole('checkbox', { name: 'Every event (*)' }).uncheck();
      await form.getByRole('checkbox', { name: 'order.paid' }).check();
      await form.getByRole('checkbox', { name: 'sluice.delivery.dead' }).check();
      await everyInputLabelled(frame);
      await form.getByRole('button', { name: 'Create' }).click();
      await ui.getByRole('link', { name: 'Open hooks' }).click();
      await ui.getByRole('heading', { name: 'hooks', exact: true }).waitFor();
      const id = /#\/destinations\/(dst_[0-9a-z]+)/.exec(frame.url())?.[1] ?? assert.fail(frame.url());
      const read = async () =>
        (await box.api<Record<string, unknown>>('GET', `/v1/destinations/${id}`, undefined, tenant.apiKey))
          .body;
      assert.deepEqual([...((await read()).eventTypes as string[])].sort(), [
        'order.paid',
        'sluice.delivery.dead',
      ]);

      // Its limit, period, burst and concurrency; pause and resume.
      const limits = ui.locator('form.limit-form');
      await limits.getByLabel('Limit').fill('7');
      await limits.locator('select[name="period"]').selectOption('minute');
      await limits.getByLabel('Burst').fill('10');
      await limits.getByLabel('Max concurrency').fill('2');
      await limits.getByRole('button', { name: 'Apply limit' }).click();
      await ui.getByText('Limit set to 7 / minute').waitFor();
      const saved = await read();
      assert.deepEqual(saved.rateLimit, { limit: 7, period: 'minute', burst: 10 });
      assert.equal(saved.maxConcurrency, 2);
      if (process.env.SLUICE_DOCS_SCREENSHOT === '1') {
        await frame.evaluate('scrollTo(0, 0)');
        await page.screenshot({ path: DOCS_SHOT });
      }
      await ui.getByRole('button', { name: 'Pause' }).click();
      await ui.getByRole('button', { name: 'Resume' }).click();
      await ui.getByRole('button', { name: 'Pause' }).waitFor();
      assert.equal((await read()).state, 'active');

      // The secret: shown, then rotated (after the browser's confirmation).
      await ui.getByRole('button', { name: 'Show secret' }).click();
      assert.match(await ui.getByLabel('Signing secret').inputValue(), /^whsec_/);
      await ui.getByRole('button', { name: 'Rotate secret' }).click();
      await ui.getByRole('button', { name: 'Rotate now' }).click();
      await ui.getByText('Secret rotated.').waitFor();

      // A test event; then a delivery's request and response.
      await ui.getByRole('button', { name: 'Send test event' }).click();
      await ui.getByText(/^Test event evt_|^Not sent:/).waitFor();
      assert.equal(await ui.getByText(/^Test event evt_/).count(), 1, 'the test event is sent');
      await rcv.waitFor(
        () => rcv.arrivals(rcv.path('hooks')).some((a) => a.headers['webhook-event-type'] === 'sluice.test'),
        15_000,
        'the test event to arrive',
      );
      const paid = await postEvent(box, tenant.apiKey, {
        type: 'order.paid',
        destinationId: id,
        payload: { order: 1 },
      });
      const row = ui.locator(`tr[data-delivery="${paid.deliveries[0]?.id}"][data-status="delivered"]`);
      await row.waitFor({ timeout: 90_000 });
      await row.getByRole('button').first().click();
      await ui.getByTestId('request-excerpt').getByText('"order"').first().waitFor();
      await ui.locator('table.attempts').getByText('200').first().waitFor();
      await shot(page, '2-delivery');

      // A dead delivery, replayed from the portal.
      const patched = await box.api(
        'PATCH',
        `/v1/destinations/${id}`,
        {
          retry: { maxAttempts: 1, initialDelayMs: 0, maxDelayMs: 0 },
          rateLimit: { limit: 50, period: 'second' },
        },
        tenant.apiKey,
      );
      assert.equal(patched.status, 200);
      await rcv.setDefault(rcv.path('hooks'), 500);
      const dead = await postEvent(box, tenant.apiKey, {
        type: 'order.paid',
        destinationId: id,
        payload: { order: 2 },
      });
      const dlv = dead.deliveries[0]?.id ?? assert.fail('no delivery');
      await waitUntil(
        async () => (await getDelivery(box, tenant.apiKey, dlv)).status === 'dead',
        15_000,
        'dead',
      );
      await rcv.setDefault(rcv.path('hooks'), 200);
      await ui.getByRole('button', { name: `Replay ${dlv}` }).click();
      await waitUntil(
        async () => (await getDelivery(box, tenant.apiKey, dlv)).status === 'delivered',
        15_000,
        'the replayed delivery to arrive',
      );

      // The frame reloaded alone (the host page untouched) keeps its link, though the
      // fragment no longer holds the token and a cross-site frame's storage may be refused.
      await Promise.all([
        frame.waitForNavigation(),
        frame.evaluate('setTimeout(() => location.reload(), 0)'),
      ]);
      await ui.getByRole('heading', { name: 'hooks', exact: true }).waitFor();
      assert.equal(await ui.getByText(/Open this page from your link/).count(), 0);

      // Keyboard: every control in order with a visible ring; nothing wider than the phone.
      await tabOrder(page, frame, 40);
      const wide = (await frame.evaluate(`[...document.querySelectorAll('body *')]
        .filter((el) => el.getBoundingClientRect().right > innerWidth + 0.5 && !el.closest('.table-wrap, .chart'))
        .map((el) => el.tagName + '.' + el.className + ' ' + Math.round(el.getBoundingClientRect().right))`)) as string[];
      assert.deepEqual(wide.slice(0, 5), [], 'nothing wider than the phone, outside the tables');
      await everyInputLabelled(frame);
      await shot(page, '3-phone');

      // A read link: the same pages, no write control.
      const readPage = await context.newPage();
      const readLink = await portalLink(box, tenant, 'read');
      await readPage.goto(readLink.url);
      await readPage.getByText('Read only').waitFor();
      assert.equal(new URL(readPage.url()).hash, '#/');
      const readToken = new URL(readLink.url).hash.replace('#token=', '');
      assert.equal(await readPage.evaluate('sessionStorage.getItem("sluice.portal.token")'), readToken);
      assert.equal(await readPage.evaluate('localStorage.length'), 0);
      await readPage.getByRole('link', { name: 'hooks', exact: true }).click();
      await readPage.getByRole('heading', { name: 'hooks', exact: true }).waitFor();
      for (const name of [
        'Apply limit',
        'Pause',
        'Rotate secret',
        'Show secret',
        'Save settings',
        'Send test event',
      ])
        assert.equal(await readPage.getByRole('button', { name }).count(), 0, `no ${name}`);
      assert.equal(await readPage.getByRole('button', { name: /^Delete destination/ }).count(), 0);
      assert.equal(await readPage.getByRole('button', { name: /^Replay / }).count(), 0);
      assert.equal(await readPage.locator('form.limit-form').getByLabel('Limit').isDisabled(), true);
      await readPage.getByRole('link', { name: 'Destinations' }).first().click();
      await readPage.getByRole('link', { name: 'hooks', exact: true }).waitFor();
      assert.equal(await readPage.getByRole('button', { name: 'New destination' }).count(), 0);
      await shot(readPage, '4-read');

      // A manage link narrowed to one destination: that one editable, none to add.
      const narrowPage = await context.newPage();
      const narrow = await portalLink(box, tenant, 'manage', [id]);
      await narrowPage.goto(narrow.url);
      await narrowPage.getByRole('link', { name: 'hooks', exact: true }).waitFor();
      assert.equal(await narrowPage.getByRole('button', { name: 'New destination' }).count(), 0);
      await narrowPage.getByRole('link', { name: 'hooks', exact: true }).click();
      await narrowPage.getByRole('button', { name: 'Apply limit' }).waitFor();

      // Revoked: the open page turns into the link's full page at its next call.
      await manage.revoke();
      await ui.getByText('This link has expired or was revoked').waitFor({ timeout: 10_000 });
      assert.equal(await ui.getByTestId('expired').textContent(), 'Ask Acme webhooks for a new one.');
      assert.equal((await stored(frame)).token, null, 'the token is forgotten');
      await shot(page, '5-revoked');

      // A tenant's API key is not a link: the page refuses it and forgets it.
      const keyPage = await context.newPage();
      await keyPage.goto(`${box.url}/portal/#token=${tenant.apiKey}`);
      await keyPage.getByText(/opens with a portal link only/).waitFor();
      assert.equal(await keyPage.evaluate("sessionStorage.getItem('sluice.portal.token')"), null);
      assert.deepEqual(errors, [], 'no error in the page');
      await context.close();
    } finally {
      await close();
      await host.close();
    }
  });
});
