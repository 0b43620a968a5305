/**
 * A test that needs a server fails when the server is not there, never skips: a run that
 * skipped it would look green and prove nothing. The error names the server, where it was
 * looked for and how to start one (CONTRIBUTING.md, "The suites and the servers they need").
 */

import { spawnSync } from 'node:child_process';

/** How to start the shared Redis the tests use, on 127.0.0.1:6379, keeping nothing on disk. */
export const START_REDIS = 'redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save ""';

/** How to start the machine's PostgreSQL (Debian's cluster `main`) on 127.0.0.1:5432. */
export const START_POSTGRES = 'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start';

/** How to get `redis-server` and `redis-cli`, which the private Redis servers and clusters run. */
export const INSTALL_REDIS = 'install Redis (Debian: apt-get install redis-server, which brings redis-cli)';

/** What a test throws when a server, or the binary that starts one, is missing. */
export class ServerMissingError extends Error {
  override name = 'ServerMissingError';
}

/** `url` without its credentials, for a message. */
export const shownUrl = (url: string): string => url.replace(/\/\/[^@/]*@/, '//');

const installed = new Map<string, boolean>();

function onPath(command: string): boolean {
  let found = installed.get(command);
  if (found === undefined) {
    found = spawnSync(command, ['--version'], { stdio: 'ignore' }).status === 0;
    installed.set(command, found);
  }
  return found;
}

/** Throws a ServerMissingError unless every command runs: `what` needs them, `install` says how to get them. */
export function requireCommands(what: string, commands: string[], install: string): void {
  const missing = commands.filter((command) => !onPath(command));
  if (missing.length === 0) return;
  throw new ServerMissingError(`${what} needs ${missing.join(' and ')} on PATH, not found: ${install}`);
}
