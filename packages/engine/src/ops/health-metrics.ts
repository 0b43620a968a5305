/**
 * The gauge of destinations by health state (`sluice_destinations_by_health{state}`), read
 * from the store at each scrape: the store is the truth, so every replica shows the same
 * numbers (query it with `max()`); a failed read keeps the last values (`scrapeRead`). The
 * counters of transitions and probes are EngineMetrics'.
 */

import type { Store } from '@sluice/store';
import { Gauge, type Registry } from 'prom-client';
import { scrapeRead } from './scrape.ts';

export function registerHealthGauge(registry: Registry, store: Pick<Store, 'healthCounts'>): Gauge<'state'> {
  const guard = scrapeRead(registry, 'sluice_destinations_by_health');
  return new Gauge({
    name: 'sluice_destinations_by_health',
    help: 'Destinations (not deleted) by endpoint health: healthy, degraded, suspended.',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      await guard(async () => {
        const counts = await store.healthCounts();
        for (const [state, n] of Object.entries(counts)) this.set({ state }, n);
      });
    },
  });
}
