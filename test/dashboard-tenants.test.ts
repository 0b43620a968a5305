/**
 * The dashboard's tenants view (admin only), in real headless Chromium (Debian's, driven by
 * playwright-core) as test/dashboard.test.ts launches it: Sluice's own tenant (alerts) is
 * listed but cannot be renamed, deleted or given a key; the operator creates a tenant and
 * reads its API key once (copied to the clipboard); renames it; creates a second key, which
 * works against the API; deletes the first key, refused (401) at once; the last key cannot be
 * deleted (the 409 said plainly); deletes the tenant by typing its name: its key is refused,
 * its destination and the tenant are gone. Two tenants of one name are told apart by id in
 * the pickers and the destinations table. A tenant's key sees no Tenants view. Screenshots at
 * 1366 and 390 px wide go to `test-artifacts/dashboard/` (git-ignored). Without a browser it
 * skips, loudly; in CI (`CI=true`) a missing browser fails it.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { browserMissing, launch, shooter } from './helpers/browser.ts';
import { createDestination, createTenant, harness, waitUntil } from './helpers/sluice.ts';

const SYSTEM_TENANT_ID = 'ten_00000000000000000000000000';
const ALERT_SECRET = `whsec_${Buffer.from('operator-alert-secret-0123456789').toString('base64')}`;

const why = browserMissing('the dashboard tenants browser test');
const shot = shooter('dashboard', { prefix: 'tenants-', fullPage: true });

/** Nothing in the page's main content reaches past the window (no cut table, no sideways scroll). */
async function fitsWidth(page: Page): Promise<void> {
  // A string, evaluated in the page: this file is typed without the DOM's names.
  const { width, widest } = (await page.evaluate(`(() => {
    const main = document.querySelector('main');
    let widest = main.scrollWidth;
    for (const el of main.querySelectorAll('*')) widest = Math.max(widest, el.getBoundingClientRect().right);
    return { width: innerWidth, widest: Math.ceil(widest) };
  })()`)) as { width: number; widest: number };
  assert.ok(widest <= width, `the content reaches ${widest} px in a ${width} px window`);
}

/**
 * Waits for the focus on the element of this id (or name): the page moves it after a render.
 * Locators, not waitForFunction: the dashboard's CSP forbids the eval that one polls with.
 */
const focusOn = (page: Page, id: string) =>
  page.locator(`[id="${id}"]:focus, [name="${id}"]:focus`).waitFor({ timeout: 5_000 });

const keyRowsAre = (page: Page, n: number) =>
  waitUntil(async () => (await page.locator('tr[data-key]').count()) === n, 5_000, `${n} key rows`, 50);

describe('the dashboard: tenants', { skip: why ?? false }, () => {
  it('create a tenant (key shown once), rename it, rotate its keys, delete it; the system tenant stays', {
    timeout: 120_000,
  }, async (t) => {
    // With an alert URL, Sluice's own tenant exists (ADR 0009); no alert fires here.
    const { box } = await harness(t, (rcv) => ({
      SLUICE_ALERT_URL: rcv.url('ops'),
      SLUICE_ALERT_SECRET: ALERT_SECRET,
    }));
    const status = async (key: string, path = '/v1/destinations') =>
      (await fetch(`${box.url}${path}`, { headers: { authorization: `Bearer ${key}` } })).status;
    const { browser, close } = await launch();
    try {
      const context = await browser.newContext({ viewport: { width: 1366, height: 768 } });
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: box.url });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (err) => errors.push(err.message));

      await page.goto(`${box.url}/dashboard`);
      await page.getByLabel('Token').fill(box.adminToken);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Destinations' }).waitFor();
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Tenants' }).click();
      await page.getByRole('heading', { name: 'Tenants', exact: true }).waitFor();

      // Sluice's own tenant: listed, marked, and nothing on its page changes it.
      const systemRow = page.locator(`tr[data-tenant="${SYSTEM_TENANT_ID}"]`);
      await systemRow.getByText('system', { exact: true }).waitFor();
      await systemRow.getByRole('link', { name: 'sluice (system)' }).click();
      await page.getByTestId('system-tenant').waitFor();
      assert.match(
        (await page.getByTestId('system-tenant').textContent()) ?? '',
        /cannot be renamed or deleted/,
      );
      for (const name of ['Rename', 'Delete tenant', 'Create another key'])
        assert.equal(
          await page.getByRole('button', { name }).count(),
          0,
          `no "${name}" on the system tenant`,
        );
      await shot(page, '0-system-1366');
      await page.getByRole('link', { name: 'Tenants', exact: true }).last().click();

      // Create a tenant from the keyboard: its key is shown once, copied, and it works.
      const name = page.locator('form.tenant-form').getByLabel('Name');
      await name.fill('initech');
      await name.press('Enter');
      const keyInput = page.getByLabel('API key of initech');
      await keyInput.waitFor();
      const firstKey = await keyInput.inputValue();
      assert.match(firstKey, /^sk_/);
      await page.getByText('Shown once.').waitFor();
      // The key takes the focus; Tab reaches Copy, Enter copies.
      await focusOn(page, 'new-tenant-key');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      await page.getByText('Copied.').waitFor();
      assert.equal(await page.evaluate('navigator.clipboard.readText()'), firstKey);
      assert.equal(await status(firstKey), 200, 'the new tenant key works');
      await shot(page, '1-created-1366');
      const row = page.locator('tr', { has: page.getByRole('link', { name: 'initech', exact: true }) });
      const tenantId = (await row.getAttribute('data-tenant')) ?? assert.fail('no row for initech');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter'); // Done: the key leaves the page, the focus returns to the name
      assert.equal(await page.getByLabel('API key of initech').count(), 0, 'the key is gone from the page');
      await focusOn(page, 'name');

      // Its page: rename it.
      await row.getByRole('link', { name: 'initech' }).click();
      await page.getByRole('heading', { name: 'initech', exact: true }).waitFor();
      assert.equal((await page.content()).includes(firstKey), false, 'the key is never shown again');
      await page.getByLabel('Name', { exact: true }).fill('Initech Corp');
      await page.getByRole('button', { name: 'Rename' }).click();
      await page.getByText('Renamed to Initech Corp.').waitFor();
      await page.getByRole('heading', { name: 'Initech Corp', exact: true }).waitFor();
      const read = await fetch(`${box.url}/v1/tenants/${tenantId}`, {
        headers: { authorization: `Bearer ${box.adminToken}` },
      });
      assert.equal(((await read.json()) as { name: string }).name, 'Initech Corp');

      // Its keys: one; create a second, shown once, and it works too.
      const keyRows = page.locator('tr[data-key]');
      await keyRows.first().waitFor();
      assert.equal(await keyRows.count(), 1);
      const firstKeyId = (await keyRows.first().getAttribute('data-key')) ?? assert.fail('no key row');
      // Its prefix (the key's first characters) tells it apart; never the key.
      assert.ok(
        firstKey.startsWith(
          ((await keyRows.first().locator('td').nth(1).textContent()) ?? '?').replace('…', ''),
        ),
      );
      await page.getByText("To rotate a key: create another, switch the tenant's clients to it").waitFor();
      await page.getByRole('button', { name: 'Create another key' }).click();
      const second = page.getByLabel(/^New API key key_/);
      await second.waitFor();
      const secondKey = await second.inputValue();
      assert.notEqual(secondKey, firstKey);
      assert.equal(await status(secondKey), 200, 'the second key works');
      await keyRowsAre(page, 2);
      const destination = await createDestination(box, secondKey, {
        name: 'hooks',
        url: 'http://127.0.0.1:9/hooks',
        rateLimit: { limit: 5, period: 'second' },
      });
      await shot(page, '2-keys-1366');

      // Delete the first key: refused at once.
      page.once('dialog', (dialog) => void dialog.accept());
      await page.getByRole('button', { name: `Delete key ${firstKeyId}` }).click();
      await page.getByText(`Key ${firstKeyId} deleted`).waitFor();
      await focusOn(page, 'keys-title'); // the focus left with the row goes to the keys
      assert.equal(await status(firstKey), 401, 'the deleted key is refused at once');
      assert.equal(await status(secondKey), 200);
      await keyRowsAre(page, 1);

      // The last key stays: the 409 said plainly.
      const secondKeyId = (await keyRows.first().getAttribute('data-key')) ?? assert.fail('no key row');
      page.once('dialog', (dialog) => void dialog.accept());
      await page.getByRole('button', { name: `Delete key ${secondKeyId}` }).click();
      await page
        .getByRole('alert')
        .getByText('A tenant keeps at least one key: create another first.')
        .waitFor();
      assert.equal(await status(secondKey), 200, 'the last key still works');

      // At phone width: the tenant's page and the list fit, nothing cut.
      await page.setViewportSize({ width: 390, height: 844 });
      await fitsWidth(page);
      await shot(page, '3-tenant-390');

      // Delete the tenant: only once its name is typed.
      const confirmName = page.getByLabel("Type the tenant's name, Initech Corp, to confirm");
      const deleteButton = page.getByRole('button', { name: 'Delete tenant' });
      await page.getByText('its API keys and portal links stop working at once').waitFor();
      await confirmName.fill('initech');
      assert.equal(await deleteButton.isDisabled(), true, 'a wrong name does not delete');
      await confirmName.fill('Initech Corp');
      await confirmName.press('Enter');
      await page.getByText('Tenant Initech Corp deleted.').waitFor();
      await page.getByRole('heading', { name: 'Tenants', exact: true }).waitFor();
      await page.locator(`tr[data-tenant="${SYSTEM_TENANT_ID}"]`).waitFor();
      assert.equal(await page.locator(`tr[data-tenant="${tenantId}"]`).count(), 0, 'gone from the list');
      assert.equal(await status(secondKey), 401, "the deleted tenant's key is refused");
      assert.equal(await status(box.adminToken, `/v1/tenants/${tenantId}`), 404);
      assert.equal(await status(box.adminToken, `/v1/destinations/${destination.id}`), 404);
      await fitsWidth(page);
      await shot(page, '4-list-390');

      // The list at 1366 px, with the new tenant's key on screen.
      await page.setViewportSize({ width: 1366, height: 768 });
      await page.locator('form.tenant-form').getByLabel('Name').fill('globex');
      await page.getByRole('button', { name: 'Create tenant' }).click();
      const globexKey = await page.getByLabel('API key of globex').inputValue();
      await page.locator('tr[data-tenant]', { hasText: 'globex' }).waitFor();
      await shot(page, '5-list-1366');

      // Tenants of one name (each guide makes an "acme"): the pickers and the destinations
      // table tell them apart by a short id, the full one on hover and on copy.
      const acmes = [await createTenant(box, box.adminToken), await createTenant(box, box.adminToken)];
      for (const acme of acmes) {
        await createDestination(box, acme.apiKey, {
          name: 'acme-hooks',
          url: 'http://127.0.0.1:9/hooks',
          rateLimit: { limit: 5, period: 'second' },
        });
      }
      await page
        .getByRole('navigation', { name: 'Main' })
        .getByRole('link', { name: 'Destinations' })
        .click();
      const picker = page
        .locator('form.filters')
        .getByLabel('Tenant')
        .locator('option', { hasText: /^acme/ });
      await waitUntil(async () => (await picker.count()) === 2, 5_000, 'both acmes in the picker', 50);
      const options = [];
      for (const option of await picker.all())
        options.push({ label: await option.textContent(), title: await option.getAttribute('title') });
      const byId = (a: { title: string | null }, b: { title: string | null }) =>
        String(a.title).localeCompare(String(b.title));
      assert.deepEqual(
        options.sort(byId),
        acmes.map((a) => ({ label: `acme · ten_…${a.id.slice(-6)}`, title: a.id })).sort(byId),
      );
      const tenantOf = page.getByTestId('tenant-of').filter({ hasText: /^acme / });
      assert.deepEqual(
        (await tenantOf.allTextContents()).sort(),
        acmes.map((a) => `acme ten_…${a.id.slice(-6)}`).sort(),
      );
      const shortId = page.locator(`.short-id[data-id="${acmes[0]?.id}"]`);
      assert.equal(await shortId.getAttribute('title'), acmes[0]?.id);
      await shortId.click(); // one click selects it
      await page.keyboard.press('ControlOrMeta+KeyC');
      assert.equal(
        await page.evaluate('navigator.clipboard.readText()'),
        acmes[0]?.id,
        'the whole id copied',
      );
      await shot(page, '6-same-names-1366');

      // A tenant's key: no Tenants view, and its address shows the destinations instead.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('Token').fill(globexKey);
      await page.keyboard.press('Enter');
      await page.getByText('Tenant: globex').waitFor();
      assert.equal(await page.getByRole('link', { name: 'Tenants' }).count(), 0);
      await page.goto(`${box.url}/dashboard/#/tenants`);
      await page.getByRole('heading', { name: 'Destinations' }).waitFor();
      assert.deepEqual(errors, [], 'no error in the page');
      await context.close();
    } finally {
      await close();
    }
  });
});
