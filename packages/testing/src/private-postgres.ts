/**
 * A Postgres server of one test's own, which the test may stop and start (never the
 * machine's shared one): `initdb` and `pg_ctl` run as the `postgres` user on a free loopback
 * port, its data directory in a temporary directory removed by `remove`. Trust
 * authentication, loopback only, no durability settings changed (a stop with `-m immediate`
 * is a crash, and the restart recovers from the WAL as a real one would).
 *
 * Needs the PostgreSQL server binaries (`initdb`, `pg_ctl`) on PATH and, when run as root,
 * the `postgres` user (the server refuses to run as root): without them it throws a
 * ServerMissingError saying so.
 */

import { execFile as execFileCb, spawnSync } from 'node:child_process';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { listenOnce } from './ports.ts';
import { requireCommands, ServerMissingError } from './required.ts';

const execFile = promisify(execFileCb);

const isRoot = process.getuid?.() === 0;

/** Throws a ServerMissingError saying why unless a private Postgres can run here. */
function requireBinaries(): void {
  requireCommands(
    'a private PostgreSQL server',
    ['initdb', 'pg_ctl'],
    'install the PostgreSQL server (Debian: apt-get install postgresql) and put its bin directory, /usr/lib/postgresql/<version>/bin, on PATH',
  );
  if (isRoot && spawnSync('id', ['-u', 'postgres']).status !== 0)
    throw new ServerMissingError(
      'a private PostgreSQL server run as root needs a postgres user to run it (the server refuses root): useradd postgres',
    );
}

/** `command args` as the `postgres` user when this process is root, else as this user. */
async function run(command: string, args: string[]): Promise<string> {
  const [file, argv] = isRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  const { stdout } = await execFile(file, argv, { timeout: 60_000 });
  return stdout;
}

export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`. */
  url: string;
  port: number;
  /** Starts the server (again) and waits until it accepts connections. */
  start(): Promise<void>;
  /** Stops the server: `immediate` is a crash (no checkpoint), `fast` a clean shutdown. */
  stop(mode?: 'immediate' | 'fast'): Promise<void>;
  /** Stops the server if it runs and deletes its data directory. */
  remove(): Promise<void>;
}

/** Creates a cluster in a temporary directory and starts it. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  requireBinaries();
  const dir = await mkdtemp(join(tmpdir(), 'sluice-pg-'));
  const data = join(dir, 'data');
  const log = join(dir, 'server.log');
  if (isRoot) {
    const { stdout } = await execFile('id', ['-u', 'postgres']);
    const { stdout: gid } = await execFile('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const port = await listenOnce(0);
  if (port === null) throw new Error('no free loopback port');
  let running = false;
  const pg: PrivatePostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start: async () => {
      // The socket directory is the temporary one: no clash with the machine's server.
      const options = `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c fsync=off`;
      await run('pg_ctl', ['start', '-D', data, '-l', log, '-w', '-t', '60', '-o', options]);
      running = true;
    },
    stop: async (mode = 'fast') => {
      await run('pg_ctl', ['stop', '-D', data, '-m', mode, '-w', '-t', '60']);
      running = false;
    },
    remove: async () => {
      if (running) await pg.stop('immediate').catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
  try {
    await run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
    await pg.start();
  } catch (err) {
    await pg.remove();
    throw err;
  }
  return pg;
}
