/**
 * The operator dashboard as a new tenant tries it, in real headless Chromium (Debian's, driven
 * by playwright-core): signed in with a tenant's key, the header names the tenant; edit a
 * destination's URL, event types (from the catalog, `sluice.*` included, and a free pattern),
 * retry policy and timeout, and see each saved; a destination whose deliveries all fail with
 * 4xx says so beside "healthy"; "Retry now" and "Replay" say what they do; adaptive pacing
 * turned on draws the effective limit (only then), and a notice stays with its destination;
 * the event log's filters (type and prefix.*, destination, since / until) and pages; "Retry
 * now" on a delivery waiting out its backoff, none on one never attempted; delete a
 * destination after confirming; and at 390 px wide the table scrolls inside its box while the
 * sign-out stays in view.
 *
 * Screenshots go to `test-artifacts/dashboard-edit/` (git-ignored).
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { browserMissing, launch, shooter } from './helpers/browser.ts';
import {
  createDestination,
  createTenant,
  type Destination,
  getDelivery,
  harness,
  postEvent,
  postEvents,
  type TestBox,
  waitUntil,
} from './helpers/sluice.ts';

const why = browserMissing('the dashboard editing test');
const shot = shooter('dashboard-edit');

type FullDestination = Destination & {
  eventTypes: string[];
  retry: { maxAttempts: number; initialDelayMs: number; maxDelayMs: number };
  timeoutMs: number;
};

async function readDestination(box: TestBox, key: string, id: string) {
  const res = await box.api<FullDestination>('GET', `/v1/destinations/${id}`, undefined, key);
  return res;
}

/** The number of rows the event log shows once it has settled on `expected`. */
async function logShows(page: Page, expected: number, what: string) {
  await waitUntil(
    async () =>
      (await page.getByTestId('log-count').textContent())?.endsWith(
        `: ${expected} event${expected === 1 ? '' : 's'}`,
      ),
    10_000,
    `the event log to show ${expected} events for ${what}`,
    100,
  );
  assert.equal(await page.locator('tr[data-event]').count(), expected, what);
}

/** Every box of these elements lies inside the viewport's width. */
async function insideViewport(page: Page, selectors: string[]) {
  const width = page.viewportSize()?.width ?? 0;
  for (const selector of selectors) {
    const box = await page.locator(selector).first().boundingBox();
    assert.ok(box, `${selector} is shown`);
    assert.ok(
      box.x >= 0 && box.x + box.width <= width + 0.5,
      `${selector} inside 0–${width}: ${JSON.stringify(box)}`,
    );
  }
}

describe('the dashboard: edit, delete, the 4xx note, the event log, phone width', {
  skip: why ?? false,
}, () => {
  it('a tenant edits and deletes destinations, reads the event log, on a laptop and a phone', {
    timeout: 180_000,
  }, async (t) => {
    const { box, rcv } = await harness(t);
    const { browser, close } = await launch();
    try {
      const tenant = await createTenant(box, box.adminToken, 'acme');
      const key = tenant.apiKey;
      const created = await box.api(
        'POST',
        '/v1/event-types',
        { name: 'order.paid', description: 'An order was paid.', example: { order: 1 } },
        box.adminToken,
      );
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const orders = await createDestination(box, key, {
        name: 'orders',
        url: rcv.url('orders-a'),
        rateLimit: { limit: 50, period: 'second' },
      });
      const other = await createDestination(box, key, {
        name: 'users',
        url: rcv.url('users'),
        rateLimit: { limit: 50, period: 'second' },
        eventTypes: ['user.*'],
      });
      const whoami = await box.api('GET', '/v1/whoami', undefined, key);

      const page = await browser.newPage({ viewport: { width: 1366, height: 768 } });
      const errors: string[] = [];
      page.on('pageerror', (err) => errors.push(err.message));
      await page.goto(`${box.url}/dashboard/`);
      await page.getByLabel('Token').fill(key);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Destinations' }).waitFor();
      // The tenant's name (GET /v1/whoami); an API without it still signs in, unnamed.
      const who = whoami.status === 200 ? 'Tenant: acme' : 'Tenant key';
      assert.equal(await page.getByTestId('who').textContent(), who);
      t.diagnostic(`GET /v1/whoami: ${whoami.status}; the header says "${who}"`);

      // Edit the URL, the event types (catalog, operational, a free pattern), retries, timeout.
      await page.getByRole('link', { name: 'orders', exact: true }).click();
      await page.getByRole('heading', { name: 'orders', exact: true }).waitFor();
      const form = page.locator('form.edit-form');
      const types = form.getByTestId('event-types');
      await types.getByRole('checkbox', { name: 'sluice.delivery.dead' }).waitFor();
      await form.getByLabel('URL').fill(rcv.url('orders-b'));
      await types.getByRole('checkbox', { name: /^Every event/ }).uncheck();
      await types.getByRole('checkbox', { name: /^order\.paid/ }).check();
      await types.getByRole('checkbox', { name: /^sluice\.delivery\.dead/ }).check();
      await types.getByLabel('Other types or patterns').fill('invoice.*');
      await form.getByLabel('Attempts at most').fill('1');
      await form.getByLabel('First retry after (ms)').fill('100');
      await form.getByLabel('Longest wait between attempts (ms)').fill('2000');
      await form.getByLabel('Timeout of one attempt (ms)').fill('5000');
      await form.getByRole('button', { name: 'Save settings' }).click();
      await form.getByText(/^Saved at/).waitFor();
      const saved = (await readDestination(box, key, orders.id)).body;
      assert.equal(saved.url, rcv.url('orders-b'));
      assert.deepEqual([...saved.eventTypes].sort(), ['invoice.*', 'order.paid', 'sluice.delivery.dead']);
      assert.deepEqual(saved.retry, { maxAttempts: 1, initialDelayMs: 100, maxDelayMs: 2000 });
      assert.equal(saved.timeoutMs, 5000);
      // As a new visit shows it.
      await page.reload();
      await page.getByText(rcv.url('orders-b')).first().waitFor();
      await types.getByRole('checkbox', { name: /^sluice\.delivery\.dead/ }).waitFor();
      assert.equal(await types.getByRole('checkbox', { name: /^order\.paid/ }).isChecked(), true);
      assert.equal(await types.getByRole('checkbox', { name: /^Every event/ }).isChecked(), false);
      assert.equal(await types.getByLabel('Other types or patterns').inputValue(), 'invoice.*');
      assert.equal(await form.getByLabel('Timeout of one attempt (ms)').inputValue(), '5000');

      // Every delivery answered 404: "healthy", and beside it the 4xx note.
      await rcv.setDefault(rcv.path('orders-b'), 404);
      const sent = await postEvents(
        box,
        key,
        [1, 2].map((n) => ({ type: 'order.paid', destinationId: orders.id, payload: { order: n } })),
        2,
      );
      for (const s of sent) {
        const id = s.deliveries[0]?.id ?? assert.fail('no delivery');
        await waitUntil(async () => (await getDelivery(box, key, id)).status === 'dead', 15_000, 'dead');
      }
      const note = page.getByTestId('note-4xx');
      await note.waitFor({ timeout: 10_000 });
      assert.equal(await note.textContent(), '· all recent deliveries failed with 4xx (404)');
      assert.equal(await page.locator('.title-row [data-health="healthy"]').count(), 1);
      // Replay and Retry now say what they do.
      const replay = page.getByRole('button', { name: /^Replay dlv_/ }).first();
      await replay.waitFor();
      assert.match((await replay.getAttribute('title')) ?? '', /fresh attempt budget/);
      assert.match(
        (await page.locator('#retry-help').textContent()) ?? '',
        /Replay: put this dead delivery back/,
      );
      await shot(page, '1-edited-4xx');

      // Adaptive pacing on from the limit form: the chart draws the effective limit, and its legend.
      const limitForm = page.locator('form.limit-form');
      await limitForm.getByLabel('Limit').fill('40');
      await limitForm.getByLabel(/^Adaptive pacing/).check();
      await limitForm.getByRole('button', { name: 'Apply limit' }).click();
      await page.getByText('Limit set to 40 / second').waitFor();
      const legend = page.locator('.chart .u-legend');
      await legend.getByText('effective limit', { exact: true }).waitFor();
      await page.getByTestId('effective-limit').waitFor();
      await shot(page, '2-adaptive');
      // Straight on to another destination (users: 50/s, not adaptive): the notice was about
      // orders, and without adaptive pacing there is no effective limit to draw.
      await page.evaluate(`location.hash = '#/destinations/${other.id}'`);
      await page.getByRole('heading', { name: 'users', exact: true }).waitFor();
      await legend.getByText('limit', { exact: true }).waitFor();
      assert.equal(await page.getByTestId('current-limit').textContent(), '50 / second');
      assert.equal(await page.getByText(/^Limit set to/).count(), 0, "orders' notice is not on users' page");
      assert.equal(await legend.getByText('effective limit').count(), 0, 'no effective limit in the legend');
      assert.equal(await page.getByTestId('effective-limit').count(), 0);
      assert.equal(await page.locator('.chart').getAttribute('data-effective'), '');

      // The event log: filters and pages.
      await postEvent(box, key, { type: 'invoice.paid', payload: { invoice: 1 } });
      await postEvents(
        box,
        key,
        [1, 2, 3].map((n) => ({ type: 'user.created', payload: { user: n } })),
        3,
      );
      await postEvents(
        box,
        key,
        Array.from({ length: 30 }, (_, n) => ({ type: 'bulk.item', payload: { n } })),
        8,
      );
      await page.getByRole('link', { name: 'Event log' }).click();
      await page.getByRole('heading', { name: 'Event log' }).waitFor();
      await logShows(page, 25, 'the first page of everything');
      const filters = page.getByRole('form', { name: 'Event log filters' });
      const apply = () => filters.getByRole('button', { name: 'Apply filters' }).click();
      await filters.getByLabel('Type').fill('order.*');
      await apply();
      await logShows(page, 2, 'type order.*');
      await filters.getByLabel('Type').fill('invoice.paid');
      await apply();
      await logShows(page, 1, 'type invoice.paid');
      await filters.getByLabel('Type').fill('');
      await filters.getByLabel('Destination').selectOption({ label: 'users' });
      await apply();
      await logShows(page, 3, 'destination users');
      await filters.getByLabel('Since').fill('2099-01-01T00:00:00');
      await apply();
      await logShows(page, 0, 'since 2099');
      await filters.getByLabel('Since').fill('');
      await filters.getByLabel('Until').fill('2000-01-01T00:00:00');
      await apply();
      await logShows(page, 0, 'until 2000');
      await filters.getByRole('button', { name: 'Clear' }).click();
      await filters.getByLabel('Type').fill('bulk.*');
      await apply();
      await logShows(page, 25, 'bulk.* page 1');
      await page.getByRole('button', { name: 'Older' }).click();
      await logShows(page, 5, 'bulk.* page 2');
      assert.equal(await page.getByRole('button', { name: 'Older' }).isDisabled(), true);
      await shot(page, '3-event-log');
      await page.getByRole('button', { name: 'Newer' }).click();
      await logShows(page, 25, 'bulk.* page 1 again');
      // A row carries the payload's size; the event, opened, is read with its payload.
      const row = page.locator('tr[data-event]').first();
      assert.match((await row.locator('td.num').textContent()) ?? '', /^\d+ B$/);
      await row.locator('a').click();
      await page.getByRole('heading', { name: 'Event lookup' }).waitFor();
      await page.locator('pre.payload').filter({ hasText: '"n":' }).waitFor();

      // "Retry now" where a retry means something: on a pending delivery waiting out its
      // backoff (attempted once, answered 500), not on one never attempted (its destination
      // paused); the API takes the retry.
      await rcv.setDefault(rcv.path('flaky'), 500);
      const flaky = await createDestination(box, key, {
        name: 'flaky',
        url: rcv.url('flaky'),
        rateLimit: { limit: 50, period: 'second' },
        retry: { maxAttempts: 5, initialDelayMs: 600_000, maxDelayMs: 600_000 },
      });
      const job = async (n: number) =>
        (await postEvent(box, key, { type: 'job.ran', destinationId: flaky.id, payload: { job: n } }))
          .deliveries[0]?.id ?? assert.fail('no delivery');
      const tried = await job(1);
      await waitUntil(
        async () => {
          const d = await getDelivery(box, key, tried);
          return d.status === 'pending' && d.attempts.length === 1;
        },
        15_000,
        'one failed attempt, then the backoff wait',
      );
      assert.equal((await box.api('POST', `/v1/destinations/${flaky.id}/pause`, undefined, key)).status, 200);
      const untried = await job(2);
      await page.goto(`${box.url}/dashboard/#/destinations/${flaky.id}`);
      await page.getByRole('heading', { name: 'flaky', exact: true }).waitFor();
      await page.locator(`tr[data-delivery="${untried}"][data-status="pending"]`).waitFor();
      const retryNow = page.getByRole('button', { name: `Retry now ${tried}` });
      await retryNow.waitFor();
      assert.equal(
        await page.getByRole('button', { name: `Retry now ${untried}` }).count(),
        0,
        'no "Retry now" on a delivery never attempted',
      );
      assert.match(
        (await page.locator('#retry-help').textContent()) ?? '',
        /^Retry now: attempt this pending/,
      );
      await retryNow.click();
      await page.locator(`tr[data-delivery="${tried}"]`).getByText('Replayed: pending').waitFor();
      const retried = await getDelivery(box, key, tried);
      assert.ok(
        retried.nextAttemptAt !== null && Date.parse(retried.nextAttemptAt) <= Date.now(),
        `retried: due now, not in 10 minutes (${retried.nextAttemptAt})`,
      );

      // Delete, after confirming: gone from the table and from the API.
      await page.goto(`${box.url}/dashboard/#/destinations/${other.id}`);
      await page.getByRole('heading', { name: 'users', exact: true }).waitFor();
      await page.getByRole('button', { name: 'Delete destination…' }).click();
      await page.getByText('Its undelivered deliveries are cancelled').waitFor();
      await page.getByRole('button', { name: 'Keep it' }).click();
      assert.equal((await readDestination(box, key, other.id)).status, 200, 'kept');
      await page.getByRole('button', { name: 'Delete destination…' }).click();
      await page.getByRole('button', { name: 'Delete users' }).click();
      await page.getByRole('heading', { name: 'Destinations' }).waitFor();
      await page.getByRole('link', { name: 'orders', exact: true }).waitFor();
      assert.equal(await page.getByRole('link', { name: 'users', exact: true }).count(), 0);
      assert.equal((await readDestination(box, key, other.id)).status, 404, 'deleted');

      // Phone width: the table scrolls inside its box; the sign-out and the nav stay in view.
      await page.setViewportSize({ width: 390, height: 844 });
      await page.getByRole('link', { name: 'orders', exact: true }).waitFor();
      await insideViewport(page, ['button:has-text("Sign out")', '.top nav', '.table-wrap', 'h1']);
      const overflow = (await page.evaluate(`(() => {
        const wrap = document.querySelector('.table-wrap');
        return {
          page: document.documentElement.scrollWidth,
          wrap: wrap ? { scroll: wrap.scrollWidth, client: wrap.clientWidth } : null,
        };
      })()`)) as { page: number; wrap: { scroll: number; client: number } | null };
      assert.ok(overflow.page <= 390, `the page does not scroll sideways: ${overflow.page}`);
      assert.ok(overflow.wrap && overflow.wrap.scroll > overflow.wrap.client, `the table scrolls in its box`);
      await shot(page, '4-phone-destinations');
      await page.getByRole('link', { name: 'orders', exact: true }).click();
      await page.getByRole('heading', { name: 'orders', exact: true }).waitFor();
      await insideViewport(page, ['button:has-text("Sign out")', 'form.edit-form', '.chart']);
      assert.ok(((await page.evaluate('document.documentElement.scrollWidth')) as number) <= 390);
      await shot(page, '5-phone-destination');
      assert.deepEqual(errors, [], 'no error in the page');
      await page.close();
    } finally {
      await close();
    }
  });
});
