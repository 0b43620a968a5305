/**
 * Headless Chromium for the browser tests (Debian's, driven by playwright-core): whether it
 * can run here, a fresh profile per launch, and screenshots under `test-artifacts/`. Without
 * a browser the tests skip, loudly; in CI (`CI=true`) a missing browser fails them.
 */

import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dashboardBuilt } from '@sluice/dashboard';
import { type Browser, chromium, type Page } from 'playwright-core';

const CHROMIUM = process.env.SLUICE_CHROMIUM ?? '/usr/bin/chromium';

/** Why a browser test cannot run here, or null; thrown in CI, written to stderr elsewhere. */
export function browserMissing(what: string): string | null {
  let why: string | null = null;
  if (!existsSync(CHROMIUM)) why = `no browser at ${CHROMIUM} (apt-get install chromium)`;
  else if (!dashboardBuilt()) why = 'the dashboard is not built (npm run build -w @sluice/dashboard)';
  if (why !== null && process.env.CI === 'true') throw new Error(`CI: ${what} cannot run: ${why}`);
  if (why !== null) process.stderr.write(`\n*** SKIPPING ${what}: ${why} ***\n\n`);
  return why;
}

export async function launch(): Promise<{ browser: Browser; close(): Promise<void> }> {
  // A fresh profile for this run; no outside connection (the machine has no network).
  const profile = await mkdtemp(join(tmpdir(), 'sluice-chromium-'));
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--disk-cache-dir=${profile}`,
    ],
  });
  return {
    browser,
    close: async () => {
      await browser.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** A screenshot in `test-artifacts/<dir>/`, named after the shape under test (and `prefix`). */
export function shooter(
  dir: string,
  opts: { prefix?: string; fullPage?: boolean } = {},
): (page: Page, name: string) => Promise<string> {
  const artifacts = new URL(`../../test-artifacts/${dir}/`, import.meta.url).pathname;
  return async (page, name) => {
    await mkdir(artifacts, { recursive: true });
    const shape = process.env.SLUICE_TEST_SHAPE ?? 'single';
    const path = join(artifacts, `${shape}-${opts.prefix ?? ''}${name}.png`);
    await page.screenshot({ path, fullPage: opts.fullPage ?? false });
    return path;
  };
}
