/**
 * `npm run start:distributed`: the distributed shape on one machine, as three processes —
 * the API, a rate limiter and a delivery worker — against `DATABASE_URL` and `REDIS_URL`
 * (defaults: this machine's Postgres and Redis). Creates the database if it is missing,
 * keeps the admin token in `<SLUICE_DATA_DIR>/admin-token` and the encryption key in
 * `<SLUICE_DATA_DIR>/encryption-key` as the single box does, passes
 * every other setting through, and forwards SIGTERM/SIGINT to the three. In production each
 * service runs on its own, as many as needed; this is the local way to try them.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadOrExit } from '@sluice/config';
import { ensureDatabase } from '@sluice/store-postgres';
import { adminToken } from './app.ts';
import { configSchema } from './config.ts';
import { KEY_FILE, keptKeyText } from './encryption-key.ts';

const root = fileURLToPath(new URL('../../../', import.meta.url));
// This machine's Postgres and Redis unless told otherwise: the local way to try the shape.
process.env.DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/sluice';
process.env.REDIS_URL ??= 'redis://127.0.0.1:6379/0';
// The settings as `npm start` reads them (a bad one stops here, named); each service reads its own.
const config = loadOrExit(configSchema, 'sluice');
const dataDir = resolve(process.env.INIT_CWD ?? process.cwd(), config.SLUICE_DATA_DIR);
const admin = adminToken(dataDir, config.SLUICE_ADMIN_TOKEN);
// The encryption key as given, or the data directory's (generated on the first start).
const key = process.env.SLUICE_ENCRYPTION_KEY ? undefined : keptKeyText(dataDir);
const env: NodeJS.ProcessEnv = {
  ...process.env,
  SLUICE_ADMIN_TOKEN: admin.token,
  ...(key && { SLUICE_ENCRYPTION_KEY: key.text }),
};
await ensureDatabase(process.env.DATABASE_URL);
if (admin.generated) {
  process.stderr.write(
    `\n  Sluice admin token (shown once, kept in ${resolve(dataDir, 'admin-token')}):\n  ${admin.token}\n\n`,
  );
}
if (key?.generated) {
  process.stderr.write(
    `  Generated the encryption key of the signing secrets into ${resolve(dataDir, KEY_FILE)}: back it up, apart from the database.\n\n`,
  );
}

// Each on its schema's default port (3000, 3001, 3002) unless told: PORT is the API's.
const services: [string, string | undefined][] = [
  ['api', process.env.PORT],
  ['rate-limiter', process.env.RATE_LIMITER_PORT],
  ['delivery-worker', process.env.DELIVERY_WORKER_PORT],
];
const children: ChildProcess[] = services.map(([name, port]) =>
  spawn(process.execPath, [`services/${name}/src/main.ts`], {
    cwd: root,
    env: { ...env, PORT: port }, // an undefined value is left out of the child's environment
    stdio: 'inherit',
  }),
);

let stopping = false;
const stop = (signal: NodeJS.Signals) => {
  stopping = true;
  for (const child of children) if (child.exitCode === null) child.kill(signal);
};
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));

const codes = await Promise.all(
  children.map(
    (child, i) =>
      new Promise<number>((done) =>
        child.once('exit', (code) => {
          // One service gone on its own: stop the others rather than run half a Sluice.
          if (!stopping) {
            process.stderr.write(`sluice: ${services[i]?.[0]} exited (${code}); stopping the others\n`);
            stop('SIGTERM');
          }
          done(code ?? 1);
        }),
      ),
  ),
);
process.exit(Math.max(...codes));
