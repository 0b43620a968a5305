/**
 * Sluice single box as a target: started as a child process exactly as `npm start` runs it
 * (`node services/single/src/main.ts`, a fresh data directory, a free port), with the
 * bench's probe preloaded for its event-loop delay (sluice-process.ts), and driven ONLY
 * through `@sluice/client` (sluice-client.ts, shared with the distributed shape).
 */

import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errorMessage } from '../common.ts';
import { driveSluice } from './sluice-client.ts';
import { readMetrics, startSluice, stopSluice } from './sluice-process.ts';
import type { CreateTarget, Target, TargetSetup } from './target.ts';

export const createTarget: CreateTarget = async (setup: TargetSetup): Promise<Target> => {
  const { runDir, options } = setup;
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-'));
  const adminToken = randomBytes(24).toString('hex');
  const profileDir = join(runDir, 'profile');
  const sluice = await startSluice({
    name: 'sluice',
    script: 'services/single/src/main.ts',
    runDir,
    options,
    profileDir,
    env: { SLUICE_DATA_DIR: dataDir, SLUICE_ADMIN_TOKEN: adminToken },
  });
  const driving = driveSluice(sluice.url, setup, adminToken);

  return {
    pids: () => ({ sluice: sluice.child.pid as number }),
    setup: async () => ({ ...(await driving.setup()), port: Number(new URL(sluice.url).port) }),
    submit: driving.submit,
    setLimit: driving.setLimit,
    snapshot: async () => {
      const metrics = await readMetrics(sluice.url);
      return metrics ? { ...metrics } : null;
    },

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
