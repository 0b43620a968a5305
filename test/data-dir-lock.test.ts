/**
 * One single box per data directory (services/single/src/data-dir-lock.ts): a second box on
 * a directory in use, in another process or in this one, refuses to start with a paragraph
 * that names the directory and says what to do, exits non-zero before it logs "engine
 * started", and the first runs on; a holder killed with SIGKILL leaves nothing held, so the
 * next box starts at once; a box closed and started again on its directory starts. A port in
 * use is a clear message too, never a stack trace. The distributed shape never holds its data
 * directory: its services share one for their keys.
 */

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseConfig } from '@sluice/config';
import { startSingleBox } from '@sluice/single';
import { configSchema } from '@sluice/single/config';
import { request } from 'undici';
import { assertNoLeaks } from './helpers/leaks.ts';
import { childState, SHAPE, type ShapeBox, startShape, tempDir } from './helpers/shape.ts';
import { freePort, randomToken, spawnBox } from './helpers/sluice.ts';

const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));
const MAIN = 'services/single/src/main.ts';
const singleOnly = SHAPE !== 'single' && 'the single box only: run in the single-shape pass';

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node services/single/src/main.ts` on `env`, run to its exit (30 s at most). */
function runToExit(env: Record<string, string>): Promise<Exit> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MAIN],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, HOST: '127.0.0.1', SLUICE_LOG_LEVEL: 'info', ...env },
        timeout: 30_000,
      },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** What every refusal shows: exit 1, the paragraph on stderr, no stack trace, no engine started. */
function assertRefused(exit: Exit, message: RegExp): void {
  const all = `--- stdout\n${exit.stdout}\n--- stderr\n${exit.stderr}`;
  assert.equal(exit.code, 1, `exit code 1\n${all}`);
  assert.match(exit.stderr, message, all);
  assert.doesNotMatch(exit.stderr, /^\s+at /m, `no stack trace\n${all}`);
}

const inUse = (dataDir: string) =>
  new RegExp(
    `^sluice: the data directory ${dataDir.replaceAll(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is in use by another Sluice .*Stop that one first, or .*SLUICE_DATA_DIR=.*PORT=`,
    'm',
  );

async function ready(url: string): Promise<number> {
  const res = await request(`${url}/readyz`);
  await res.body.dump();
  return res.statusCode;
}

/** The single box's settings on `dataDir`, as a test box has them. */
const settings = (dataDir: string, port = 0) =>
  parseConfig(configSchema, {
    SLUICE_DATA_DIR: dataDir,
    PORT: port,
    SLUICE_LOG_LEVEL: 'silent',
    SLUICE_ALLOW_PRIVATE_NETWORKS: 'true',
  });

describe('one single box per data directory', () => {
  it('a second box on a data directory in use refuses, in another process or this one; the first runs on', {
    skip: singleOnly,
    timeout: 90_000,
  }, async (t) => {
    const box: ShapeBox = await startShape();
    t.after(() => box.close());

    const second = await runToExit({ ...box.childEnv(), PORT: String(await freePort()) });
    assertRefused(second, inUse(box.dataDir));
    assert.doesNotMatch(second.stdout, /engine started/, 'refused before the engine starts');

    await assert.rejects(startSingleBox(settings(box.dataDir)), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'SLUICE_DATA_DIR_IN_USE');
      assert.match(`sluice: ${err.message}`, inUse(box.dataDir));
      return true;
    });

    assert.equal(await ready(box.url), 200, 'the first box runs on');

    // Closed, it lets go: the same directory starts again (helpers/shape.ts `restart`).
    await box.restart();
    assert.equal(await ready(box.url), 200, 'restarted on its data directory');
    t.after(() => assertNoLeaks());
  });

  it('after kill -9 of the box that holds it, the next box starts on it at once', {
    skip: singleOnly,
    timeout: 90_000,
  }, async (t) => {
    const state = await childState();
    t.after(() => state.close());
    const adminToken = randomToken();
    const port = await freePort();
    const holder = await spawnBox({ env: state.env, port, adminToken });
    let holding = true;
    t.after(async () => {
      if (holding) await holder.kill9();
    });

    assertRefused(
      await runToExit({ ...state.env, PORT: String(await freePort()) }),
      inUse(state.env.SLUICE_DATA_DIR as string),
    );

    await holder.kill9();
    holding = false;
    const next = await spawnBox({ env: state.env, port, adminToken });
    t.after(() => next.stop());
    assert.equal(await ready(next.url), 200, 'started on the directory the killed box held');
    t.after(() => assertNoLeaks());
  });

  it('a port in use: a clear message and exit 1, no stack trace; the data directory is let go', {
    skip: singleOnly,
    timeout: 90_000,
  }, async (t) => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise<void>((resolve) => taken.close(() => resolve())));
    const { port } = taken.address() as { port: number };
    const dataDir = await tempDir();
    t.after(() => rm(dataDir, { recursive: true, force: true }));

    assertRefused(
      await runToExit({ SLUICE_DATA_DIR: dataDir, PORT: String(port) }),
      new RegExp(`^sluice: cannot listen on 127\\.0\\.0\\.1:${port}: another process .*PORT=`, 'm'),
    );

    // In this process: the listen's own error, and the start closes what it opened.
    await assert.rejects(startSingleBox(settings(dataDir, port)), { code: 'EADDRINUSE' });
    const box = await startSingleBox(settings(dataDir));
    await box.close();
    t.after(() => assertNoLeaks());
  });

  it('the distributed shape holds no data directory: a second process on the same one starts', {
    skip: SHAPE !== 'distributed' && 'the distributed shape only: run in the distributed-shape pass',
    timeout: 90_000,
  }, async (t) => {
    const box = await startShape();
    t.after(() => box.close());
    const other = await spawnBox({ env: box.childEnv(), port: await freePort(), adminToken: box.adminToken });
    t.after(() => other.stop());
    assert.equal(await ready(other.url), 200);
    assert.equal(await ready(box.url), 200);
    assert.ok(!existsSync(join(box.dataDir, 'sluice.lock')), 'no lock file in the shared data directory');
    t.after(() => assertNoLeaks());
  });
});
