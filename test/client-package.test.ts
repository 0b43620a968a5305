/**
 * `@sluice/client` outside this repository, as packages/client/README.md installs it:
 * `npm pack -w @sluice/client` (its `prepack` compiles it), the tarball installed offline
 * into a fresh project in the system's temp dir (nowhere near this repository's
 * node_modules), then a plain `.mjs` program imports it and calls a running Sluice, and a
 * strict TypeScript program type-checks against its declarations alone.
 *
 * The program runs under each Node.js found: the machine's own `node` on PATH (outside any
 * node_modules/.bin; Node 20 here, with no type stripping at all) and the one running this
 * test. Packaging is the same in both shapes, so it runs in the single-shape pass only.
 */

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { accessSync, constants, realpathSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SHAPE } from './helpers/shape.ts';
import { harness } from './helpers/sluice.ts';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const skip = SHAPE !== 'single' && 'packaging: checked in the single-shape pass';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end, with npm's own `npm_*` settings of a parent `npm run` removed. */
function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<Run> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...clean, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function ok(result: Run, what: string): string {
  assert.equal(result.code, 0, `${what} failed:\n${result.stderr}\n${result.stdout}`);
  return result.stdout;
}

/** The machine's `node`: the first on PATH outside any node_modules/.bin, if there is one. */
function machineNode(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '' || dir.includes('node_modules')) continue;
    const candidate = join(dir, 'node');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return undefined;
}

/** Each distinct Node.js to run the program with: the machine's, then this test's. */
function nodes(): string[] {
  const found = [machineNode(), process.execPath].filter((path): path is string => path !== undefined);
  return [...new Map(found.map((path) => [realpathSync(path), path])).values()];
}

/** A user's program: plain JavaScript, the package by its name. */
const PROGRAM = `
import { isSluiceError, Sluice, SluiceError } from '@sluice/client';

const { SLUICE_URL: baseUrl, SLUICE_ADMIN_TOKEN: adminToken, RECEIVER_URL: receiver } = process.env;
const admin = new Sluice({ baseUrl, token: adminToken });
const tenant = await admin.tenants.create({ name: 'packed-' + process.version });
const sluice = new Sluice({ baseUrl, token: tenant.apiKey });
const destination = await sluice.destinations.create({
  url: receiver,
  rateLimit: { limit: 5, period: 'second' },
  eventTypes: ['order.*'],
});
const event = { type: 'order.paid', payload: { order: 'ord_1' }, idempotencyKey: 'ord_1-paid' };
const sent = await sluice.events.send(event);
const again = await sluice.events.send(event);
let delivery = await sluice.deliveries.get(sent.deliveries[0].id);
for (const deadline = Date.now() + 15_000; delivery.status !== 'delivered' && Date.now() < deadline; ) {
  await new Promise((resolve) => setTimeout(resolve, 50));
  delivery = await sluice.deliveries.get(delivery.id);
}
const missing = await sluice.destinations.get('dst_00000000000000000000000000').catch((err) => err);
console.log(JSON.stringify({
  node: process.version,
  tenant: tenant.id,
  secret: destination.secret.slice(0, 6),
  event: sent.id,
  replayed: again.id,
  destinationOfDelivery: sent.deliveries[0].destinationId,
  destination: destination.id,
  status: delivery.status,
  attempts: delivery.attempts.map((a) => a.statusCode),
  missing: { isError: missing instanceof SluiceError, notFound: isSluiceError(missing, 'not_found'), status: missing.status },
}));
`;

/**
 * A TypeScript user's program: strict, its declarations only (no skipLibCheck, no @types),
 * with some of the named types the client generates from the API's document.
 */
const TS_PROGRAM = `
import {
  type CreateDestinationInput,
  type Delivery,
  type DeliveryWithAttempts,
  type DestinationWithSecret,
  type NewEvent,
  type ServerErrorCode,
  Sluice,
  SluiceError,
  type TenantWithKey,
} from '@sluice/client';

const sluice = new Sluice({ baseUrl: 'http://127.0.0.1:1', token: 'key' });
const event: NewEvent = { type: 'order.paid', payload: { order: 'ord_1' } };
export async function send(): Promise<Delivery['status'] | string> {
  try {
    const sent = await sluice.events.send(event, { timeout: 1_000 });
    return (await sluice.deliveries.get(sent.deliveries[0]!.id)).status;
  } catch (err) {
    if (err instanceof SluiceError) return err.code;
    throw err;
  }
}
export function create(tenant: TenantWithKey): Promise<DestinationWithSecret> {
  const input: CreateDestinationInput = { url: 'https://example.com/hook', rateLimit: { limit: 5, period: 'second' } };
  return new Sluice({ baseUrl: 'http://127.0.0.1:1', token: tenant.apiKey }).destinations.create(input);
}
export const statusCodes = (d: DeliveryWithAttempts): (number | null)[] => d.attempts.map((a) => a.statusCode);
export const overQuota = (code: ServerErrorCode): boolean => code === 'rate_limited';
`;
const TS_CONFIG = {
  compilerOptions: {
    target: 'es2022',
    lib: ['es2022', 'dom'],
    module: 'nodenext',
    moduleResolution: 'nodenext',
    types: [],
    strict: true,
    noUncheckedIndexedAccess: true,
    skipLibCheck: false,
    noEmit: true,
  },
  files: ['program.ts'],
};

describe('the packed @sluice/client', { skip }, () => {
  it('installs from its tarball into a new project and calls a running Sluice under plain Node', async (t) => {
    const { box, rcv } = await harness(t);
    const work = await mkdtemp(join(tmpdir(), 'sluice-client-pack-'));
    t.after(() => rm(work, { recursive: true, force: true }));
    const packs = join(work, 'packs');
    const project = join(work, 'project');

    // What the README says: pack from the repository root, install the tarball.
    await mkdir(packs);
    const packed = JSON.parse(
      ok(
        await run('npm', ['pack', '-w', '@sluice/client', '--json', '--pack-destination', packs], REPO_ROOT),
        'npm pack',
      ).replace(/^[^[]*/, ''),
    ) as { filename: string; files: { path: string }[] }[];
    const tarball = join(packs, packed[0]!.filename);
    const shipped = packed[0]!.files.map((f) => f.path).sort();
    assert.ok(shipped.includes('dist/index.js') && shipped.includes('dist/index.d.ts'), shipped.join(', '));
    assert.deepEqual(
      shipped.filter((p) => !/^(dist\/[\w-]+\.(js|d\.ts)|README\.md|package\.json)$/.test(p)),
      [],
      'only the compiled JavaScript, its declarations, the README and the manifest',
    );

    await mkdir(project);
    await writeFile(
      join(project, 'package.json'),
      JSON.stringify({ name: 'app', private: true, type: 'module' }),
    );
    ok(
      await run(
        'npm',
        ['install', '--offline', '--no-audit', '--no-fund', '--no-update-notifier', tarball],
        project,
      ),
      'npm install <tarball>',
    );
    const installed = join(project, 'node_modules', '@sluice', 'client');
    const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    assert.equal(manifest.dependencies, undefined, 'no dependencies');
    assert.equal(manifest.peerDependencies, undefined, 'no peer dependencies');
    assert.deepEqual(manifest.engines, { node: '>=20.3' });
    for (const file of await readdir(join(installed, 'dist'))) {
      const text = await readFile(join(installed, 'dist', file), 'utf8');
      assert.doesNotMatch(text, /(from|import\()\s*['"](?!\.\/)/, `${file} imports only its own files`);
    }

    await writeFile(join(project, 'program.mjs'), PROGRAM);
    const receiver = rcv.url('packed');
    const env = { SLUICE_URL: box.url, SLUICE_ADMIN_TOKEN: box.adminToken, RECEIVER_URL: receiver };
    const tenants = new Set<string>();
    for (const node of nodes()) {
      const out = JSON.parse(
        ok(await run(node, ['program.mjs'], project, env), `${node} program.mjs`),
      ) as Record<string, unknown>;
      const major = Number(/^v(\d+)\./.exec(String(out.node))?.[1]);
      assert.ok(major >= 20, `${node} is Node ${out.node}`);
      t.diagnostic(`${node}: Node ${out.node}`);
      assert.match(String(out.tenant), /^ten_/);
      tenants.add(String(out.tenant));
      assert.equal(out.secret, 'whsec_');
      assert.match(String(out.event), /^evt_/);
      assert.equal(out.replayed, out.event, 'the same idempotency key answers the first event');
      assert.equal(out.destinationOfDelivery, out.destination);
      assert.equal(out.status, 'delivered');
      assert.deepEqual(out.attempts, [200]);
      assert.deepEqual(out.missing, { isError: true, notFound: true, status: 404 });
    }
    assert.equal(tenants.size, nodes().length, 'each run made its own tenant');
    assert.equal(rcv.arrivals(rcv.path('packed')).length, nodes().length, 'one webhook per run');

    await writeFile(join(project, 'program.ts'), TS_PROGRAM);
    await writeFile(join(project, 'tsconfig.json'), JSON.stringify(TS_CONFIG));
    const tsc = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    ok(await run(process.execPath, [tsc, '-p', project], project), 'tsc against the declarations');
  });
});
