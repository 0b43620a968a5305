import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Gauge, Registry } from 'prom-client';
import { exposition, scrapeAllowed, scrapeRead } from './scrape.ts';

const unavailable = (text: string, metric: string): number =>
  Number(
    new RegExp(`^sluice_metrics_unavailable_total\\{metric="${metric}"\\} (\\d+)$`, 'm').exec(text)?.[1],
  );

/** A gauge set from `source` at each scrape, through the guard (as the engine's gauges are). */
function gauge(registry: Registry, name: string, source: () => Promise<number>, timeoutMs?: number): void {
  const guard = scrapeRead(registry, name, timeoutMs);
  new Gauge({
    name,
    help: name,
    registers: [registry],
    async collect() {
      await guard(async () => this.set(await source()));
    },
  });
}

describe('scrapeRead and exposition: a scrape answers while a dependency does not', () => {
  it('a failed read keeps the last value and is counted; the counter starts at 0', async () => {
    const registry = new Registry();
    let down = false;
    gauge(registry, 'test_depth', async () => {
      if (down) throw new Error('connect ECONNREFUSED');
      return 42;
    });
    const ignored = () => assert.fail('nothing is left out');
    let text = await exposition(registry, ignored);
    assert.match(text, /^test_depth 42$/m);
    assert.equal(unavailable(text, 'test_depth'), 0);
    down = true;
    text = await exposition(registry, ignored);
    assert.match(text, /^test_depth 42$/m);
    assert.equal(unavailable(text, 'test_depth'), 1);
  });

  it('a read that does not answer is given up after the timeout', async () => {
    const registry = new Registry();
    gauge(registry, 'test_hung', () => new Promise<number>(() => {}), 50);
    const started = performance.now();
    const text = await exposition(registry, () => assert.fail('nothing is left out'));
    assert.ok(performance.now() - started < 1_000);
    assert.match(text, /^test_hung 0$/m);
    assert.equal(unavailable(text, 'test_hung'), 1);
  });

  it('a metric that still throws is left out and reported, the others answer', async () => {
    const registry = new Registry();
    new Gauge({
      name: 'test_unguarded',
      help: 'throws',
      registers: [registry],
      collect: () => {
        throw new Error('a bug');
      },
    });
    gauge(registry, 'test_fine', async () => 1);
    const left: string[] = [];
    const text = await exposition(registry, (metric) => left.push(metric));
    assert.deepEqual(left, ['test_unguarded']);
    assert.doesNotMatch(text, /test_unguarded/);
    assert.match(text, /^test_fine 1$/m);
  });
});

describe('scrapeAllowed: SLUICE_METRICS_TOKEN', () => {
  it('anyone without a token set; with one, only its bearer header', () => {
    assert.equal(scrapeAllowed(undefined, undefined), true);
    assert.equal(scrapeAllowed('Bearer anything', undefined), true);
    const token = 'scrape-token-0123456789';
    assert.equal(scrapeAllowed(`Bearer ${token}`, token), true);
    assert.equal(scrapeAllowed(`bearer ${token}`, token), true, 'the scheme in any case');
    for (const header of [undefined, '', token, `Bearer ${token} `, `Bearer  ${token}`, 'Bearer x'])
      assert.equal(scrapeAllowed(header, token), false, String(header));
  });
});
