/**
 * The repository keeps itself whole for whoever clones it: every file a doc or a comment
 * points at is in the clone, the design of record is `docs/design.md` (nothing points outside
 * the repository), comments carry no lab notebook, and no source file is two ideas (over 500
 * lines). Static files: run once, in the single-shape pass.
 */

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { SHAPE } from './helpers/shape.ts';

const skip = SHAPE === 'single' ? false : 'static files: checked in the single-shape pass';
const root = resolve(import.meta.dirname, '..');
const tracked = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .filter((f) => f !== '' && existsSync(join(root, f)));
const read = (file: string): string => readFileSync(join(root, file), 'utf8');
const source = (f: string): boolean => /\.(ts|tsx|lua|ya?ml|sh|sql|css|html)$/.test(f) || f === '.ci/run';

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchorsIn(file: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of read(file).split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = !fenced && /^#{1,6} (.+)$/.exec(line);
    if (heading) anchors.add(anchorOf(heading[1]!));
  }
  return anchors;
}

describe('the repository', { skip }, () => {
  test('every relative link of every Markdown file resolves, anchors included', () => {
    const broken: string[] = [];
    for (const file of tracked.filter((f) => f.endsWith('.md'))) {
      const text = read(file).replace(/```[\s\S]*?```/g, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^(https?:|mailto:)/.test(target!)) continue;
        const [path, anchor] = target!.split('#') as [string, string | undefined];
        const at = path === '' ? file : join(dirname(file), decodeURI(path));
        if (!existsSync(join(root, at))) broken.push(`${file}: ${target} (no ${at})`);
        else if (anchor && at.endsWith('.md') && !anchorsIn(at).has(anchor))
          broken.push(`${file}: ${target} (no heading #${anchor} in ${at})`);
      }
    }
    assert.deepEqual(broken, []);
  });

  test('every repository path a comment or a doc names is in the clone', () => {
    const missing: string[] = [];
    const pathLike =
      /\b((?:docs|packages|services|test|bench|k8s|deploy|examples)\/[\w./-]+\.(?:md|ts|tsx|lua|sql|ya?ml|json))\b/g;
    for (const file of tracked.filter((f) => f.endsWith('.md') || source(f))) {
      for (const [, path] of read(file).matchAll(pathLike)) {
        // Placeholders of a how-to: the ADR a contributor writes, the overlay an operator writes.
        if (/NNNN|\/mine\//.test(path!)) continue;
        const candidates = [path!, join(dirname(file), path!)];
        if (!candidates.some((p) => existsSync(join(root, p)))) missing.push(`${file}: ${path}`);
      }
    }
    assert.deepEqual([...new Set(missing)], []);
  });

  test('nothing points outside the repository: the design of record is docs/design.md', () => {
    const outside = tracked.filter(
      (f) => f !== 'test/repository.test.ts' && /\.\.\/shared\b|shared\/(DESIGN|API|STYLE)\.md/.test(read(f)),
    );
    assert.deepEqual(outside, []);
    assert.ok(existsSync(join(root, 'docs/design.md')));
  });

  test('comments say what is true now: no session history in code', () => {
    const notebook = tracked
      .filter((f) => source(f) && f !== 'test/repository.test.ts')
      .filter((f) => /\bsession \d+\b|\(session\b|amendment of session/i.test(read(f)));
    assert.deepEqual(notebook, []);
  });

  test('no source file under packages/ or services/ is over 500 lines (tests and generated files aside)', () => {
    const long = tracked
      .filter((f) => /^(packages|services)\/.*\.(ts|tsx)$/.test(f) && !/\.test\.tsx?$/.test(f))
      // A generated file is as long as what it is generated from (its header says so).
      .filter((f) => !/^\/\*\*\n \* Generated from /.test(read(f)))
      .map((f) => ({ f, lines: read(f).split('\n').length }))
      .filter(({ lines }) => lines > 500)
      .map(({ f, lines }) => `${f}: ${lines}`);
    assert.deepEqual(long, []);
  });
});
