import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { maxInAnyWindow } from './audit.ts';
import { mulberry32 } from './random.ts';
import { type RateLimit, type RatePlan, ratePlan } from './rate-plan.ts';
import { type SendHandle, SendWindow } from './send-window.ts';
import { decideTick, MIN_TICK_GAP_MS, nextTickAt, publishAhead, roomBatch, type TickInput } from './tick.ts';

/** The lead of `SLUICE_TICK_LEAD_MS`'s default. */
const LEAD_MS = 100;

const PER_SECOND_10 = ratePlan({ limit: 10, period: 'second' });
const PER_MINUTE_120 = ratePlan({ limit: 120, period: 'minute' });
const base: Omit<TickInput, 'plan'> = { stillInQueue: 0, sentInWindow: 0, inFlight: 0, maxConcurrency: null };
/** decideTick as [allow, limitedBy], for one-line cases. */
const decide = (plan: RatePlan, input: Partial<Omit<TickInput, 'plan'>>) => {
  const d = decideTick({ ...base, ...input, plan });
  return [d.allow, d.limitedBy];
};

describe('decideTick', () => {
  it('the per-run term binds a backlog, less what is still in the queue', () => {
    assert.deepEqual(decide(PER_MINUTE_120, {}), [2, 'run']);
    assert.deepEqual(decide(PER_MINUTE_120, { stillInQueue: 1 }), [1, 'run']);
    assert.deepEqual(decide(PER_SECOND_10, { stillInQueue: 4 }), [6, 'run']);
  });

  it('the window term binds: limit − sentInWindow − stillInQueue', () => {
    assert.deepEqual(decide(PER_SECOND_10, { sentInWindow: 7 }), [3, 'window']);
    assert.deepEqual(decide(PER_SECOND_10, { sentInWindow: 7, stillInQueue: 2 }), [1, 'window']);
    assert.deepEqual(decide(PER_MINUTE_120, { sentInWindow: 119 }), [1, 'window']);
  });

  it('the concurrency term binds, and counts queued deliveries as about to be in flight', () => {
    assert.deepEqual(decide(PER_SECOND_10, { maxConcurrency: 3, inFlight: 1 }), [2, 'concurrency']);
    assert.deepEqual(decide(PER_SECOND_10, { maxConcurrency: 3, inFlight: 1, stillInQueue: 1 }), [
      1,
      'concurrency',
    ]);
    assert.deepEqual(decide(PER_SECOND_10, { maxConcurrency: 0 }), [0, 'concurrency']);
  });

  it('no maxConcurrency means no concurrency bound', () => {
    const d = decideTick({ ...base, plan: PER_SECOND_10, inFlight: 1_000_000 });
    assert.deepEqual(d, { allow: 10, limitedBy: 'run' });
  });

  it('is never negative, whatever over-counts', () => {
    assert.equal(decideTick({ ...base, plan: PER_SECOND_10, sentInWindow: 15 }).allow, 0);
    assert.equal(decideTick({ ...base, plan: PER_SECOND_10, stillInQueue: 12 }).allow, 0);
    assert.equal(decideTick({ ...base, plan: PER_SECOND_10, maxConcurrency: 2, inFlight: 9 }).allow, 0);
  });

  it('is max(0, the smallest term), and names that term (random inputs)', () => {
    const random = mulberry32(7);
    const int = (n: number) => Math.floor(random() * n);
    for (let i = 0; i < 5_000; i++) {
      const plan = ratePlan({ limit: 1 + int(50), period: random() < 0.5 ? 'second' : 'minute' });
      const input = {
        plan,
        stillInQueue: int(20),
        sentInWindow: int(60),
        inFlight: int(20),
        maxConcurrency: random() < 0.4 ? null : int(15),
        bucketTokens: random() < 0.5 ? undefined : int(60),
        fairBound: random() < 0.5 ? undefined : int(60),
      };
      const terms = {
        hold: Number.NaN,
        bucket:
          input.bucketTokens === undefined
            ? Number.POSITIVE_INFINITY
            : input.bucketTokens - input.stillInQueue,
        run: plan.perRun - input.stillInQueue,
        window: plan.limit - input.sentInWindow - input.stillInQueue,
        concurrency:
          input.maxConcurrency === null
            ? Number.POSITIVE_INFINITY
            : input.maxConcurrency - input.inFlight - input.stillInQueue,
        fair:
          input.fairBound === undefined
            ? Number.POSITIVE_INFINITY
            : input.fairBound - input.inFlight - input.stillInQueue,
      };
      const smallest = Math.min(terms.run, terms.window, terms.concurrency, terms.fair, terms.bucket);
      const d = decideTick(input);
      assert.equal(d.allow, Math.max(0, smallest), JSON.stringify(input));
      assert.equal(terms[d.limitedBy], smallest, JSON.stringify(input));
    }
  });
});

describe('decideTick with a burst allowance or adaptive pacing', () => {
  const BURSTY = ratePlan({ limit: 2, period: 'second', burst: 10 });

  it('an idle destination takes the whole burst in one tick', () => {
    assert.deepEqual(decide(BURSTY, { bucketTokens: 10 }), [10, 'run']);
  });

  it('the window cap is the burst; the bucket term binds the long run', () => {
    assert.deepEqual(decide(BURSTY, { bucketTokens: 10, sentInWindow: 8 }), [2, 'window']);
    assert.deepEqual(decide(BURSTY, { bucketTokens: 2 }), [2, 'bucket']);
    assert.deepEqual(decide(BURSTY, { bucketTokens: 2, stillInQueue: 1 }), [1, 'bucket']);
    assert.deepEqual(decide(BURSTY, { bucketTokens: -3 }), [0, 'bucket']);
  });

  it('a held destination sends nothing', () => {
    assert.deepEqual(decide(PER_SECOND_10, { held: true }), [0, 'hold']);
  });

  it('held back by the bucket or a hold, the next tick is when there is room', () => {
    assert.equal(nextTickAt(1_000, 1_005, BURSTY, 1_400, 'bucket'), 1_400);
    assert.equal(nextTickAt(1_000, 1_005, BURSTY, 9_000, 'hold'), 9_000);
  });
});

describe('publishAhead', () => {
  const full = { ...base, plan: PER_SECOND_10, sentInWindow: 10 };
  const ahead = (input: TickInput, leaving: number[]) => publishAhead(input, decideTick(input), leaving);

  it('publishes what the window frees within the lead, each request starting as its slot frees', () => {
    assert.deepEqual(ahead(full, [1_040, 1_060, 1_090]), {
      allow: 3,
      limitedBy: 'window',
      startsAt: [1_040, 1_060, 1_090],
    });
  });

  it('counts what is still in the queue: those take the first slots that free', () => {
    assert.deepEqual(ahead({ ...full, sentInWindow: 9, stillInQueue: 1 }, [1_040, 1_060, 1_090]), {
      allow: 3,
      limitedBy: 'window',
      startsAt: [1_040, 1_060, 1_090],
    });
    // Over-counted (12 where the cap is 10): the first two slots to free pay for the excess.
    assert.deepEqual(ahead({ ...full, sentInWindow: 12 }, [1_040, 1_060, 1_090]), {
      allow: 1,
      limitedBy: 'window',
      startsAt: [1_090],
    });
  });

  it('keeps the other terms as they are now', () => {
    const capped = { ...full, maxConcurrency: 4, inFlight: 2 };
    assert.deepEqual(ahead(capped, [1_001, 1_002, 1_003]), {
      allow: 2,
      limitedBy: 'concurrency',
      startsAt: [1_001, 1_002],
    });
    const perMinute = { ...base, plan: PER_MINUTE_120, sentInWindow: 120 };
    assert.deepEqual(ahead(perMinute, [5, 6, 7, 8]), { allow: 2, limitedBy: 'run', startsAt: [5, 6] });
  });

  it('is null unless the window alone held the tick back and frees a slot within the lead', () => {
    assert.equal(ahead({ ...base, plan: PER_SECOND_10, sentInWindow: 5 }, [1_040]), null, 'room now');
    assert.equal(ahead(full, []), null, 'nothing frees');
    assert.equal(ahead({ ...full, held: true }, [1_040]), null, 'held');
    assert.equal(ahead({ ...full, maxConcurrency: 1, inFlight: 1 }, [1_040]), null, 'the cap binds');
    assert.equal(ahead({ ...full, stillInQueue: 3 }, [1_040, 1_050]), null, 'the queue takes them');
  });
});

describe('nextTickAt', () => {
  it('is one interval after due (not after now), when the window has room', () => {
    assert.equal(nextTickAt(1_000, 1_040, PER_SECOND_10, 1_040, 'run'), 2_000);
    assert.equal(nextTickAt(5_000, 5_000, ratePlan({ limit: 30, period: 'minute' }), 0, 'run'), 7_000);
  });

  it('is never before now (a late tick is not scheduled in the past)', () => {
    assert.equal(nextTickAt(0, 4_321, PER_SECOND_10, 0, 'run'), 4_321);
  });

  it('is never before the window has room', () => {
    assert.equal(nextTickAt(0, 10, PER_SECOND_10, 2_500, 'run'), 2_500);
  });

  it('follows the window when the window held the tick back, at least MIN_TICK_GAP_MS on', () => {
    assert.equal(nextTickAt(1_000, 1_001, PER_SECOND_10, 1_030, 'window'), 1_030);
    assert.equal(nextTickAt(1_000, 1_001, PER_SECOND_10, 1_001, 'window'), 1_001 + MIN_TICK_GAP_MS);
  });

  it('waits for 2 % of the limit in free slots when the window holds a backlog back, at least one', () => {
    assert.equal(roomBatch({ limit: 1 }), 1);
    assert.equal(roomBatch({ limit: 50 }), 1);
    assert.equal(roomBatch({ limit: 100 }), 2);
    assert.equal(roomBatch({ limit: 2_000 }), 40);
  });

  it('is the latest of due + interval, room and now (random inputs)', () => {
    const random = mulberry32(11);
    for (let i = 0; i < 2_000; i++) {
      const plan = ratePlan({ limit: 1 + Math.floor(random() * 8000), period: 'hour' });
      const due = Math.floor(random() * 1e6);
      const now = due + Math.floor(random() * 3_000);
      const room = Math.floor(random() * 1.1e6);
      const next = nextTickAt(due, now, plan, room, 'run');
      assert.ok(next >= now && next >= room && next >= due + plan.intervalMs);
      assert.ok([now, room, due + plan.intervalMs].includes(next));
    }
  });
});

// ---------------------------------------------------------------------------------------------
// A fake-clock simulation of one destination: the scheduler loop a rate limiter runs, with the
// delivery queue, the worker and the receiver reduced to random delays.

interface SimOptions {
  rate: RateLimit;
  seed: number;
  events: number;
  /** Responses in 1–5 ms and no early wakes: the throughput case. */
  fast: boolean;
  maxConcurrency?: number | null;
  marginMs?: number;
  /** Ticks run this long before the window has room and publish ahead of it (0: never). */
  leadMs?: number;
  /** Added to every request's dispatch delay (a busy rate limiter, queue and worker). */
  dispatchMs?: number;
}

interface SimResult {
  plan: RatePlan;
  arrivals: number[];
  maxConcurrent: number;
}

function simulate(o: SimOptions): SimResult {
  const random = mulberry32(o.seed);
  const plan = ratePlan(o.rate);
  const P = plan.periodMs;
  const arrivalBoundMs = Math.min(2_000, P);
  const window = new SendWindow({ periodMs: P, marginMs: o.marginMs ?? 25, arrivalBoundMs });
  type Ev = { at: number; kind: 0 | 1; req: { handle?: SendHandle; finishAt: number } };
  let events: Ev[] = [];
  const arrivals: number[] = [];
  let [pending, queued, inFlight, maxConcurrent, due, ticks] = [o.events, 0, 0, 0, 0, 0];
  // Early wakes (an ingest, a retry coming due) at random moments.
  let nextWake = o.fast ? Number.POSITIVE_INFINITY : random() * plan.intervalMs;
  while (pending > 0) {
    assert.ok(++ticks < 1_000_000, 'runaway simulation');
    let tickDue = due;
    if (nextWake < due) {
      tickDue = nextWake;
      nextWake += random() * plan.intervalMs * 1.5;
    }
    const now = tickDue + Math.floor(random() * (o.fast ? 2 : 10)); // tick lag
    // Apply starts (kind 0) and finishes (kind 1) up to now, in time order.
    const ready = events.filter((e) => e.at <= now).sort((a, b) => a.at - b.at || a.kind - b.kind);
    events = events.filter((e) => e.at > now);
    for (const e of ready) {
      if (e.kind === 0) {
        e.req.handle = window.start(e.at);
        [queued, inFlight] = [queued - 1, inFlight + 1];
        maxConcurrent = Math.max(maxConcurrent, inFlight);
      } else {
        window.finish(e.req.handle as SendHandle, e.at);
        inFlight--;
      }
    }
    const decision = decideTick({
      plan,
      stillInQueue: queued,
      sentInWindow: window.count(now),
      inFlight,
      maxConcurrency: o.maxConcurrency ?? null,
    });
    assert.ok(decision.allow >= 0);
    const lead = o.leadMs ?? 0;
    const input = {
      plan,
      stillInQueue: queued,
      sentInWindow: window.count(now),
      inFlight,
      maxConcurrency: o.maxConcurrency ?? null,
    };
    const ahead = lead > 0 ? publishAhead(input, decision, window.leaving(now, now + lead)) : null;
    const n = Math.min((ahead ?? decision).allow, pending);
    for (let i = 0; i < n; i++) {
      // The dispatch delay; a request published ahead waits for its slot too.
      const start = Math.max(
        now + (o.dispatchMs ?? 0) + Math.floor(random() * (o.fast ? 3 : 50)),
        ahead?.startsAt[i] ?? 0,
      );
      const response = 1 + Math.floor(o.fast ? random() * 5 : random() ** 3 * 2.5 * arrivalBoundMs);
      // Arrival lies between start and the response, and within arrivalBoundMs of start.
      arrivals.push(start + random() * Math.min(response, arrivalBoundMs));
      const req = { finishAt: start + response };
      events.push({ at: start, kind: 0, req }, { at: req.finishAt, kind: 1, req });
      queued++;
      pending--;
    }
    if (pending > 0) {
      const from = Math.max(now, ahead?.startsAt[n - 1] ?? now);
      const room = window.roomAt(now, plan.limit - 1, queued, from) - lead;
      due = nextTickAt(tickDue, now, plan, room, (ahead ?? decision).limitedBy);
      assert.ok(due >= now && due >= room);
    }
  }
  arrivals.sort((a, b) => a - b);
  return { plan, arrivals, maxConcurrent };
}

const LIMITS: RateLimit[] = [
  { limit: 1, period: 'second' },
  { limit: 3, period: 'second' },
  { limit: 10, period: 'second' },
  { limit: 50, period: 'second' },
  { limit: 2000, period: 'second' },
  { limit: 120, period: 'minute' },
];

describe('simulation: the limit holds in every sliding window, at the receiver', () => {
  for (const rate of LIMITS) {
    it(`${rate.limit}/${rate.period}, slow receivers and early wakes`, () => {
      const seeds = rate.limit >= 2000 ? 4 : 25;
      for (let seed = 1; seed <= seeds; seed++) {
        const events = Math.max(30, rate.limit * 6);
        const { arrivals, plan } = simulate({ rate, seed, events, fast: false, marginMs: seed % 2 ? 25 : 0 });
        assert.equal(arrivals.length, events);
        const worst = maxInAnyWindow(arrivals, plan.periodMs);
        assert.ok(worst <= rate.limit, `seed ${seed}: ${worst} in one window > ${rate.limit}`);
      }
    });
  }

  for (const rate of LIMITS) {
    it(`${rate.limit}/${rate.period}, publishing ${LEAD_MS} ms ahead of the window's room`, () => {
      const seeds = rate.limit >= 2000 ? 4 : 25;
      for (let seed = 1; seed <= seeds; seed++) {
        const events = Math.max(30, rate.limit * 6);
        for (const fast of [false, true]) {
          const marginMs = seed % 2 ? 25 : 0;
          const { arrivals, plan } = simulate({ rate, seed, events, fast, marginMs, leadMs: LEAD_MS });
          assert.equal(arrivals.length, events);
          const worst = maxInAnyWindow(arrivals, plan.periodMs);
          assert.ok(
            worst <= rate.limit,
            `seed ${seed}, fast ${fast}: ${worst} in one window > ${rate.limit}`,
          );
        }
      }
    });
  }

  it('with maxConcurrency, never more requests in flight than allowed', () => {
    for (let seed = 1; seed <= 25; seed++) {
      const rate: RateLimit = { limit: 10, period: 'second' };
      const r = simulate({ rate, seed, events: 80, fast: false, maxConcurrency: 1 + (seed % 4) });
      assert.ok(r.maxConcurrent <= 1 + (seed % 4), `seed ${seed}: ${r.maxConcurrent} in flight`);
      assert.ok(maxInAnyWindow(r.arrivals, 1_000) <= 10);
    }
  });
});

describe('simulation: throughput with fast responses', () => {
  for (const rate of LIMITS) {
    it(`a burst of 10× ${rate.limit}/${rate.period} finishes within 1.05× of ideal`, () => {
      for (let seed = 1; seed <= 3; seed++) {
        const events = 10 * rate.limit;
        const { arrivals, plan } = simulate({ rate, seed, events, fast: true });
        // Per second: (ceil(N/L) − 1) periods (docs/design.md "How we measure"). Per minute, Hookdeck's formula spreads
        // the limit over the period, so the ideal is one run per interval.
        const ideal =
          rate.period === 'second'
            ? (Math.ceil(events / plan.limit) - 1) * plan.periodMs
            : (Math.ceil(events / plan.perRun) - 1) * plan.intervalMs;
        const took = (arrivals.at(-1) as number) - (arrivals[0] as number);
        assert.ok(took <= 1.05 * ideal, `seed ${seed}: took ${Math.round(took)} ms, ideal ${ideal} ms`);
        assert.ok(maxInAnyWindow(arrivals, plan.periodMs) <= plan.limit);
      }
    });
  }
});

describe('simulation: publishing ahead of the window hides the dispatch delay', () => {
  it('a backlog at 20/second with 80 ms from tick to request: each window cycle ~80 ms shorter', () => {
    const rate: RateLimit = { limit: 20, period: 'second' };
    const took = (leadMs: number) => {
      const { arrivals } = simulate({ rate, seed: 3, events: 200, fast: true, dispatchMs: 80, leadMs });
      return (arrivals.at(-1) as number) - (arrivals[0] as number);
    };
    const [behind, ahead] = [took(0), took(LEAD_MS)];
    // Nine window cycles after the first run (docs/design.md ideal: 9 s).
    assert.ok(behind >= 9 * (1_000 + 25 + 80), `without the lead: ${Math.round(behind)} ms`);
    assert.ok(ahead <= 9 * (1_000 + 25 + 10), `with the lead: ${Math.round(ahead)} ms`);
  });
});
