/**
 * `--sluice-ref <git ref>`: benchmark Sluice as committed at a ref instead of the working
 * tree (before/after comparisons, or a working tree in the middle of an edit). The ref is
 * exported with `git archive` into a temp directory whose `node_modules` links to the
 * repository's installed packages, except the workspace links (`@sluice/*`), which point
 * into the snapshot itself. Nothing in the repository is touched.
 */

import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readlinkSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function prepareSnapshot(repoRoot: string, ref: string): { root: string; commit: string } {
  const commit = execFileSync('git', ['rev-parse', '--short', ref], { cwd: repoRoot }).toString().trim();
  const root = join(tmpdir(), `sluice-bench-snapshot-${commit}`);
  if (existsSync(join(root, 'node_modules'))) return { root, commit };
  mkdirSync(root, { recursive: true });
  const tar = execFileSync('git', ['archive', '--format=tar', commit], { cwd: repoRoot, maxBuffer: 1 << 30 });
  execFileSync('tar', ['-x', '-C', root], { input: tar });

  const modules = join(repoRoot, 'node_modules');
  const linked = join(root, 'node_modules');
  mkdirSync(linked);
  for (const entry of readdirSync(modules)) {
    if (entry === '@sluice' || entry === '.bin' || entry.startsWith('.')) continue;
    symlinkSync(join(modules, entry), join(linked, entry));
  }
  mkdirSync(join(linked, '@sluice'));
  for (const entry of readdirSync(join(modules, '@sluice'))) {
    const from = join(modules, '@sluice', entry);
    if (!lstatSync(from).isSymbolicLink()) continue;
    const target = readlinkSync(from); // relative, e.g. ../../packages/api
    symlinkSync(target, join(linked, '@sluice', entry));
    // A workspace's own nested node_modules (hoisting conflicts), if any.
    const nested = join(modules, '@sluice', target, 'node_modules');
    const own = join(linked, '@sluice', target, 'node_modules');
    if (existsSync(nested) && existsSync(join(linked, '@sluice', target)) && !existsSync(own))
      symlinkSync(nested, own);
  }
  return { root, commit };
}
