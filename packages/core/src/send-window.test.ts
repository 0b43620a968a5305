import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mulberry32 } from './random.ts';
import { type SendHandle, SendWindow, type SendWindowOptions } from './send-window.ts';

const OPTIONS: SendWindowOptions = { periodMs: 1_000, marginMs: 25, arrivalBoundMs: 500 };

/** Reference occupancy, written from the module's doc comment. */
function occupiedUntil(s: SendHandle, o: SendWindowOptions): number {
  const bound = s.writtenAt === undefined ? Number.POSITIVE_INFINITY : s.writtenAt + o.arrivalBoundMs;
  const arrivedBy = Math.min(s.finishedAt ?? Number.POSITIVE_INFINITY, bound);
  return arrivedBy + o.periodMs + o.marginMs;
}

describe('SendWindow.count', () => {
  it('is 0 when empty', () => {
    const w = new SendWindow(OPTIONS);
    assert.equal(w.count(0), 0);
    assert.equal(w.roomAt(0, 0), 0);
  });

  it('counts an in-flight send with no write time until it finishes', () => {
    const w = new SendWindow(OPTIONS);
    const h = w.start(100);
    assert.equal(w.count(100_000), 1, 'nothing bounds its arrival yet');
    w.finish(h, 100_001);
    assert.equal(w.count(100_001 + 1_024), 1);
    assert.equal(w.count(100_001 + 1_025), 0);
  });

  it('counts an in-flight written send until writtenAt + arrivalBound + period + margin', () => {
    const w = new SendWindow(OPTIONS);
    w.written(w.start(90), 100);
    const end = 100 + 500 + 1_000 + 25;
    assert.equal(w.count(100), 1);
    assert.equal(w.count(end - 1), 1);
    assert.equal(w.count(end), 0);
  });

  it('counts a finished send until finishedAt + period + margin', () => {
    const w = new SendWindow(OPTIONS);
    const h = w.start(100);
    w.finish(h, 130);
    assert.equal(w.occupiedUntil(h), 130 + 1_025);
    assert.equal(w.count(1_154), 1);
    assert.equal(w.count(1_155), 0);
  });

  it('caps a slow response at the arrival bound, from the write', () => {
    const w = new SendWindow(OPTIONS);
    const h = w.start(40);
    w.written(h, 100);
    w.finish(h, 10_000);
    assert.equal(w.occupiedUntil(h), 100 + 500 + 1_025);
    assert.equal(w.count(1_624), 1);
    assert.equal(w.count(1_625), 0);
  });

  it('counts a send from the moment it starts', () => {
    const w = new SendWindow(OPTIONS);
    w.start(0);
    w.start(0);
    assert.equal(w.count(0), 2);
  });

  it('matches a brute-force count over many sends, with pruning and compaction', () => {
    for (let seed = 1; seed <= 5; seed++) {
      const random = mulberry32(seed);
      const w = new SendWindow(OPTIONS);
      const all: SendHandle[] = [];
      let now = 0;
      for (let i = 0; i < 5_000; i++) {
        now += Math.floor(random() * 20);
        const h = w.start(now);
        all.push(h);
        // Every request ends, by its response or its timeout; one still in flight was written.
        const finishes = random() < 0.9;
        if (!finishes || random() < 0.8) w.written(h, now + Math.floor(random() * 30));
        if (finishes) w.finish(h, now + 31 + Math.floor(random() * 900));
        if (i % 7 === 0) {
          const expected = all.filter((s) => occupiedUntil(s, OPTIONS) > now).length;
          assert.equal(w.count(now), expected, `seed ${seed} at ${now}`);
        }
      }
      assert.ok(w.size < 1_000, `pruned to ${w.size}`);
    }
  });
});

describe('SendWindow.roomAt', () => {
  it('returns now when there is room', () => {
    const w = new SendWindow(OPTIONS);
    w.start(0);
    w.start(10);
    assert.equal(w.roomAt(50, 2), 50);
    assert.equal(w.roomAt(50, 5), 50);
  });

  it('returns the right end when full: the moment enough sends leave the window', () => {
    const w = new SendWindow(OPTIONS);
    for (const [start, finish] of [
      [0, 5],
      [10, 15],
      [20, 25],
    ] as const) {
      w.finish(w.start(start), finish);
    }
    // Ends: 1030, 1040, 1050.
    assert.equal(w.roomAt(100, 2), 1_030);
    assert.equal(w.roomAt(100, 1), 1_040);
    assert.equal(w.roomAt(100, 0), 1_050);
    assert.equal(w.count(1_029), 3);
    assert.equal(w.count(1_030), 2);
    assert.equal(w.count(1_050), 0);
  });

  it('treats a negative maxCount as 0', () => {
    const w = new SendWindow(OPTIONS);
    w.finish(w.start(0), 1);
    assert.equal(w.roomAt(0, -3), 1_026);
  });

  it('is a hint: assumes an in-flight send finishes now (capped at its bound), a queued one starts now', () => {
    const w = new SendWindow(OPTIONS);
    const h = w.start(0);
    w.written(h, 0);
    assert.equal(w.count(1_524), 1, 'count still holds an in-flight send to its bound');
    assert.equal(w.roomAt(10, 0), 10 + 1_025);
    assert.equal(w.roomAt(700, 0), 500 + 1_025, 'never later than the arrival bound');
    w.finish(h, 20);
    assert.equal(w.roomAt(30, 0), 20 + 1_025);
    assert.equal(w.roomAt(30, 1, 1), 20 + 1_025);
    assert.equal(w.roomAt(30, 0, 1), 30 + 1_025);
    assert.equal(new SendWindow(OPTIONS).roomAt(5, 0, 2), 5 + 1_025);
    assert.equal(new SendWindow(OPTIONS).roomAt(5, 2, 2), 5);
  });

  it('with every send finished, is the earliest time ≥ now with at most maxCount counted', () => {
    const random = mulberry32(42);
    for (let round = 0; round < 300; round++) {
      const w = new SendWindow(OPTIONS);
      let t = 0;
      const n = Math.floor(random() * 12);
      for (let i = 0; i < n; i++) {
        t += Math.floor(random() * 200);
        w.finish(w.start(t), t + 1 + Math.floor(random() * 800));
      }
      const now = t + 800 + Math.floor(random() * 1_500);
      const maxCount = Math.floor(random() * 5);
      const room = w.roomAt(now, maxCount);
      assert.ok(room >= now);
      if (room > now) assert.ok(w.count(room - 1) > maxCount, `round ${round}: not the earliest`);
      assert.ok(w.count(room) <= maxCount, `round ${round}: no room at ${room}`);
    }
  });

  it('with sends in flight, is never later than the exact room and never before now', () => {
    const random = mulberry32(43);
    for (let round = 0; round < 300; round++) {
      const w = new SendWindow(OPTIONS);
      const all: SendHandle[] = [];
      let t = 0;
      for (let i = Math.floor(random() * 12); i > 0; i--) {
        t += Math.floor(random() * 200);
        const h = w.start(t);
        if (random() < 0.7) w.written(h, t);
        all.push(h);
      }
      const now = t + Math.floor(random() * 300);
      for (const h of all)
        if (random() < 0.5) w.finish(h, Math.min(now, h.startedAt + Math.floor(random() * 800)));
      const maxCount = Math.floor(random() * 5);
      const room = w.roomAt(now, maxCount);
      const ends = all.map((s) => occupiedUntil(s, OPTIONS)).filter((e) => e > now);
      ends.sort((a, b) => a - b);
      const exact = ends.length <= maxCount ? now : (ends[ends.length - maxCount - 1] as number);
      assert.ok(room >= now && room <= exact, `round ${round}: ${room} not in [${now}, ${exact}]`);
    }
  });
});

describe('SendWindow.leaving', () => {
  it('lists when each counting send leaves, of those that leave by `until`, ascending', () => {
    const random = mulberry32(44);
    for (let round = 0; round < 300; round++) {
      const w = new SendWindow(OPTIONS);
      const all: SendHandle[] = [];
      let t = 0;
      for (let i = Math.floor(random() * 12); i > 0; i--) {
        t += Math.floor(random() * 200);
        const h = w.start(t);
        if (random() < 0.5) w.written(h, t + Math.floor(random() * 10));
        if (random() < 0.6) w.finish(h, t + Math.floor(random() * 800));
        all.push(h);
      }
      const now = t + Math.floor(random() * 1_500);
      const until = now + Math.floor(random() * 200);
      const before = w.count(now);
      const ends = all.map((s) => occupiedUntil(s, OPTIONS)).filter((e) => e > now && e <= until);
      assert.deepEqual(
        w.leaving(now, until),
        ends.sort((a, b) => a - b),
        `round ${round}`,
      );
      assert.equal(w.count(now), before, `round ${round}: what still counts now is kept`);
    }
  });

  it('frees no slot for a send whose arrival is not bounded yet', () => {
    const w = new SendWindow(OPTIONS);
    w.start(0);
    w.finish(w.start(10), 20);
    assert.deepEqual(w.leaving(1_000, 1_100), [20 + 1_025]);
  });
});

describe('SendWindow.roomAt from a later moment', () => {
  it('counts from `from`: queued requests start then, sends gone by then do not count', () => {
    const w = new SendWindow(OPTIONS);
    w.finish(w.start(0), 10); // leaves at 1_035
    w.finish(w.start(50), 60); // leaves at 1_085
    assert.equal(w.roomAt(1_000, 1, 0), 1_035);
    assert.equal(w.roomAt(1_000, 1, 0, 1_050), 1_050, 'the first is gone by 1_050');
    // Two published to start at 1_090: room for one more when the second of those leaves.
    assert.equal(w.roomAt(1_000, 1, 2, 1_090), 1_090 + 1_025);
    assert.equal(w.count(1_000), 2, 'nothing that counts now was dropped');
  });
});

describe('SendWindow.surelyRoom', () => {
  it('is true only when count + queued < limit for sure', () => {
    const random = mulberry32(44);
    for (let round = 0; round < 300; round++) {
      const w = new SendWindow(OPTIONS);
      let t = 0;
      for (let i = Math.floor(random() * 12); i > 0; i--) {
        t += Math.floor(random() * 400);
        const h = w.start(t);
        if (random() < 0.7) w.finish(h, t + Math.floor(random() * 300));
      }
      const now = t + 300 + Math.floor(random() * 2_000);
      const [limit, queued] = [1 + Math.floor(random() * 8), Math.floor(random() * 3)];
      if (w.surelyRoom(now, limit, queued)) assert.ok(w.count(now) + queued < limit, `round ${round}`);
    }
    const w = new SendWindow(OPTIONS);
    assert.equal(w.surelyRoom(0, 1, 0), true);
    assert.equal(w.surelyRoom(0, 1, 1), false);
    w.written(w.start(0), 0);
    assert.equal(w.surelyRoom(0, 2, 0), true);
    assert.equal(w.surelyRoom(0, 1, 0), false);
    assert.equal(w.surelyRoom(1_525, 1, 0), true, 'pruned once it cannot count');
  });
});

describe('SendWindow.mayStillArrive', () => {
  it('until its response, or its write plus the arrival bound; never bounded while unwritten', () => {
    const w = new SendWindow(OPTIONS);
    assert.equal(w.mayStillArrive(0), false, 'nothing started');
    const unwritten = w.start(100);
    assert.equal(w.mayStillArrive(100_000), true, 'started, not written: nothing bounds its arrival');
    w.finish(unwritten, 100_001);
    assert.equal(w.mayStillArrive(100_001), false, 'answered: it has arrived');
    w.written(w.start(200_000), 200_010);
    assert.equal(w.mayStillArrive(200_010 + 499), true);
    assert.equal(w.mayStillArrive(200_010 + 500), false, 'written 500 ms ago: assumed arrived');
  });
});
