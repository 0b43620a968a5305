/**
 * Sluice single box as a target: started as a child process exactly as `npm start` runs it
 * (`node services/single/src/main.ts`, a fresh data directory, a free port), with the
 * bench's probe preloaded for its event-loop delay (sluice-process.ts), and driven ONLY
 * through `@sluice/client` (sluice-client.ts, shared with the distributed shape). For the
 * cost curve, the box that creates the destinations commits without waiting for the disk
 * (`SLUICE_SQLITE_SYNCHRONOUS=normal`) and is restarted with the defaults before the run.
 */

import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errorMessage } from '../common.ts';
import { driveSluice } from './sluice-client.ts';
import { readMetrics, startSluice, stopSluice } from './sluice-process.ts';
import { sqliteStorage } from './storage.ts';
import type { CreateTarget, Target, TargetSetup } from './target.ts';

export const createTarget: CreateTarget = async (setup: TargetSetup): Promise<Target> => {
  const { runDir, options } = setup;
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-'));
  const adminToken = randomBytes(24).toString('hex');
  const profileDir = join(runDir, 'profile');
  const spawn = (name: string, env: Record<string, string>, port?: number) =>
    startSluice({
      name,
      script: 'services/single/src/main.ts',
      runDir,
      options,
      profileDir,
      env: { SLUICE_DATA_DIR: dataDir, SLUICE_ADMIN_TOKEN: adminToken, ...env },
      ...(port === undefined ? {} : { port }),
    });
  // The cost curve creates up to 100,000 destinations, each a commit that waits for the disk
  // (docs/performance.md, How to measure): they are created by a box whose commits do not
  // wait, which is then restarted with the operator's settings on the same data and address
  // for the run, and its destination cache filled as the creating box's was (`warm`).
  const restart = setup.workload.curve !== undefined;
  let sluice = await spawn(
    restart ? 'sluice-setup' : 'sluice',
    restart ? { SLUICE_SQLITE_SYNCHRONOUS: 'normal' } : {},
  );
  const driving = driveSluice(sluice.url, setup, adminToken);

  return {
    pids: () => ({ sluice: sluice.child.pid as number }),
    setup: async () => {
      const created = await driving.setup();
      const port = Number(new URL(sluice.url).port);
      if (restart) {
        await stopSluice(sluice);
        sluice = await spawn('sluice', {}, port);
        await driving.reconnect();
        await driving.warm();
      }
      return { ...created, port, ...(restart ? { restarted: true } : {}) };
    },
    submit: driving.submit,
    setLimit: driving.setLimit,
    snapshot: async () => {
      const metrics = await readMetrics(sluice.url);
      return metrics ? { ...metrics } : null;
    },
    storage: async () => sqliteStorage(join(dataDir, 'sluice.db')),

    async stop() {
      const apiAudit = await driving.audit().catch((err: unknown) => ({ error: errorMessage(err) }));
      await driving.close();
      const started = performance.now();
      const code = await stopSluice(sluice);
      // Kept for a look afterwards (attempt times, claims) when asked, as the distributed target does.
      if (process.env.SLUICE_BENCH_KEEP_DATABASE === '1')
        process.stderr.write(`sluice: data kept in ${dataDir}\n`);
      else await rm(dataDir, { recursive: true, force: true });
      const profiles = await readdir(profileDir).catch(() => [] as string[]);
      return {
        exitCode: code,
        stopMs: Math.round(performance.now() - started),
        ...driving.ingestStats(),
        apiAudit,
        profiles: profiles.map((f) => join(profileDir, f)),
      };
    },
  };
};
