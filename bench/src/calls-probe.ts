/**
 * Counts what a process asks of Redis and Postgres, by command and by statement, without
 * touching its code: loaded by probe.ts when $BENCH_CALLS_FILE is set (the distributed
 * shape's services, the BullMQ baseline's process). It wraps ioredis's
 * `Redis.prototype.sendCommand` (every command a client sends, those of a pipeline or a
 * MULTI one by one; a `Cluster`'s, as it sends them to a node, a redirected one again; a
 * script call is named after the script: `defineCommand`, of `Redis` and of `Cluster`, is
 * wrapped to know each script's SHA) and pg's `Client.prototype.query` (every statement, `BEGIN` and
 * `COMMIT` included, by what it writes and its text: `statementKey`). On SIGUSR2 it appends the
 * counts so far, `{t, redis, pg}`, to $BENCH_CALLS_FILE: the runner signals at its marks
 * (run.ts) and takes the difference (budget.ts). The modules are the ones the process itself
 * resolves (from its working directory), so that the wrapped prototypes are the ones it uses.
 */

import { appendFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

type Counts = Record<string, number>;

const file = process.env.BENCH_CALLS_FILE;
const redisCalls: Counts = {};
const pgCalls: Counts = {};
/** A script's SHA1 → its name (BullMQ's `moveToActive:6.7.0` without the version). */
const scripts = new Map<string, string>();

const bump = (counts: Counts, key: string): void => {
  counts[key] = (counts[key] ?? 0) + 1;
};

/**
 * A statement as counted: what it writes (`[insert events, deliveries]`), or the table it
 * reads first (`[select tenants]`), then its text with the whitespace collapsed, at most 120
 * characters in all — a CTE's opening says little of what it does.
 */
export function statementKey(config: unknown): string {
  const text =
    typeof config === 'string'
      ? config
      : typeof config === 'object' && config !== null && 'text' in config
        ? String((config as { text: unknown }).text)
        : '?';
  const writes = new Map<string, string[]>();
  for (const m of text.matchAll(
    /\b(INSERT INTO|(?<!\bFOR\s+(?:NO\s+KEY\s+)?)UPDATE|DELETE FROM)\s+(\w+)/gi,
  )) {
    const verb = (m[1] as string).split(' ')[0]?.toLowerCase() as string;
    const tables = writes.get(verb) ?? [];
    if (!tables.includes(m[2] as string)) tables.push(m[2] as string);
    writes.set(verb, tables);
  }
  const read = /\bFROM\s+(?!unnest\b)([a-z_]\w*)/i.exec(text)?.[1];
  const what =
    writes.size > 0
      ? [...writes].map(([verb, tables]) => `${verb} ${tables.join(', ')}`).join('; ')
      : read
        ? `select ${read}`
        : '';
  const flat = `${what ? `[${what}] ` : ''}${text.replace(/\s+/g, ' ').trim()}`;
  return flat.length > 120 ? `${flat.slice(0, 119)}…` : flat;
}

/** A command as counted: its name, or `script <name>` for EVALSHA/EVAL of a defined script. */
export function commandKey(name: string, firstArg: unknown, names: ReadonlyMap<string, string>): string {
  const lower = name.toLowerCase();
  if ((lower === 'evalsha' || lower === 'eval') && typeof firstArg === 'string') {
    const script = names.get(firstArg);
    if (script !== undefined) return `script ${script}`;
  }
  return lower;
}

/** The module as the process resolves it, or null when it has none. */
function load(name: string): unknown {
  for (const from of [join(process.cwd(), 'package.json'), import.meta.url]) {
    try {
      return createRequire(from)(name);
    } catch {
      // not from here
    }
  }
  return null;
}

interface Command {
  name: string;
  args: unknown[];
}
interface RedisPrototype {
  sendCommand: (this: unknown, command: Command, ...rest: unknown[]) => unknown;
  defineCommand: (
    this: { scriptsSet?: Record<string, { sha: string }> },
    name: string,
    ...rest: unknown[]
  ) => void;
}
interface PgPrototype {
  query: (this: unknown, config: unknown, ...rest: unknown[]) => unknown;
}

function wrapRedis(): void {
  const ioredis = load('ioredis') as {
    Redis?: { prototype: RedisPrototype };
    Cluster?: { prototype: Pick<RedisPrototype, 'defineCommand'> };
  } | null;
  const proto = ioredis?.Redis?.prototype;
  if (!proto) return;
  const send = proto.sendCommand;
  proto.sendCommand = function (command, ...rest) {
    bump(redisCalls, commandKey(command.name, command.args[0], scripts));
    return send.call(this, command, ...rest);
  };
  for (const definer of [proto, ioredis?.Cluster?.prototype]) {
    if (!definer) continue;
    const define = definer.defineCommand;
    definer.defineCommand = function (name, ...rest) {
      define.call(this, name, ...rest);
      const sha = this.scriptsSet?.[name]?.sha;
      if (sha !== undefined) scripts.set(sha, name.replace(/:\d+\.\d+\.\d+$/, ''));
    };
  }
}

function wrapPg(): void {
  const pg = load('pg') as { Client?: { prototype: PgPrototype } } | null;
  const proto = pg?.Client?.prototype;
  if (!proto) return;
  const query = proto.query;
  proto.query = function (config, ...rest) {
    bump(pgCalls, statementKey(config));
    return query.call(this, config, ...rest);
  };
}

if (file) {
  wrapRedis();
  wrapPg();
  process.on('SIGUSR2', () => {
    const line = { t: performance.timeOrigin + performance.now(), redis: redisCalls, pg: pgCalls };
    try {
      appendFileSync(file, `${JSON.stringify(line)}\n`);
    } catch {
      // the run's directory is gone: nothing to report to
    }
  });
}
