/**
 * The sender's record of recent requests to one destination, for the trailing-window
 * term of the tick arithmetic (docs/design.md I2: the limit holds in every sliding window,
 * judged at the receiver). docs/adr/0001-send-window.md.
 *
 * A request counts against the window from when it starts until it can no longer share a
 * window with any later request at the receiver. The receiver sees it at some moment
 * between its start and its response, so a request occupies the window until
 *
 *     min(finishedAt, writtenAt + arrivalBoundMs) + periodMs + marginMs
 *
 * `finishedAt` (the response arrived) is a hard bound on the arrival: with it the limit
 * holds at the receiver whatever the scheduling delays on either side. For a slow receiver
 * we stop waiting for the response `arrivalBoundMs` after the request was written to the
 * socket (`writtenAt`: our own event loop's delays are not in it) and assume it arrived by
 * then, so a receiver that takes seconds to answer still gets its full rate. When the write
 * time is not known, only the response bounds the arrival; `count` holds a request in
 * flight until one of the two bounds is known.
 *
 * Pure data: every method takes the time; nothing here reads a clock.
 */

export interface SendWindowOptions {
  periodMs: number;
  /** Added to every occupancy: clock rounding between sender and receiver. */
  marginMs: number;
  /** Longest time assumed between a request's start and its arrival. */
  arrivalBoundMs: number;
}

export interface SendHandle {
  startedAt: number;
  /** When the request was fully written to the socket, if known. */
  writtenAt: number | undefined;
  finishedAt: number | undefined;
}

export class SendWindow {
  /** Sends in start order; the front is pruned once it cannot count any more. */
  private sends: SendHandle[] = [];
  private head = 0;
  options: SendWindowOptions;

  constructor(options: SendWindowOptions) {
    this.options = options;
  }

  /** Records a request that starts at `at`; call `finish(handle, t)` when its response arrives. */
  start(at: number): SendHandle {
    const handle: SendHandle = { startedAt: at, writtenAt: undefined, finishedAt: undefined };
    this.sends.push(handle);
    return handle;
  }

  /** The request is on the socket: from now on it arrives within `arrivalBoundMs`. */
  written(handle: SendHandle, at: number): void {
    handle.writtenAt = at;
  }

  finish(handle: SendHandle, at: number): void {
    handle.finishedAt = at;
  }

  /** When this send stops counting against the window (Infinity: not known yet). */
  occupiedUntil(send: SendHandle): number {
    const { periodMs, marginMs } = this.options;
    return this.latestArrival(send) + periodMs + marginMs;
  }

  /** The latest this send can reach the receiver: its response, else its write plus the bound. */
  private latestArrival(send: SendHandle): number {
    const { arrivalBoundMs } = this.options;
    const bound = send.writtenAt === undefined ? Number.POSITIVE_INFINITY : send.writtenAt + arrivalBoundMs;
    return Math.min(send.finishedAt ?? Number.POSITIVE_INFINITY, bound);
  }

  /** Requests that count against the window at `now`. */
  count(now: number): number {
    this.prune(now);
    let n = 0;
    for (let i = this.head; i < this.sends.length; i++) {
      if (this.occupiedUntil(this.sends[i] as SendHandle) > now) n++;
    }
    return n;
  }

  /**
   * When each request that counts at `now` stops counting, of those that stop by `until`,
   * ascending: the slots the window frees in that time (a tick publishing ahead of its room,
   * core tick.ts `publishAhead`). A request whose arrival is not bounded yet frees none.
   */
  leaving(now: number, until: number): number[] {
    this.prune(now);
    const ends: number[] = [];
    for (let i = this.head; i < this.sends.length; i++) {
      const end = this.occupiedUntil(this.sends[i] as SendHandle);
      if (end > now && end <= until) ends.push(end);
    }
    return ends.sort((a, b) => a - b);
  }

  /**
   * The earliest moment ≥ `from` (default now) at which at most `maxCount` requests count
   * against the window, so that a tick then may start `limit − maxCount` more. A scheduling
   * hint, not a guard: requests in flight are assumed to finish at `from` and `queued`
   * requests (published, not started) to start then, the soonest either can leave the window
   * (`from` is later than now when those were published to start no sooner). When they take
   * longer, the tick then finds no room and asks again; `count` is what keeps the limit.
   */
  roomAt(now: number, maxCount: number, queued = 0, from = now): number {
    this.prune(now);
    const { periodMs, marginMs, arrivalBoundMs } = this.options;
    const ends: number[] = [];
    for (let i = this.head; i < this.sends.length; i++) {
      const send = this.sends[i] as SendHandle;
      const bound = send.writtenAt === undefined ? Number.POSITIVE_INFINITY : send.writtenAt + arrivalBoundMs;
      const arrivedBy = Math.min(send.finishedAt ?? from, bound);
      const end = arrivedBy + periodMs + marginMs;
      if (end > from) ends.push(end);
    }
    for (let i = 0; i < queued; i++) ends.push(from + periodMs + marginMs);
    const excess = ends.length - Math.max(0, maxCount);
    if (excess <= 0) return from;
    ends.sort((a, b) => a - b);
    return ends[excess - 1] as number;
  }

  /**
   * Whether a request started by `now` may still arrive after it: no response yet, and either
   * not written or written less than `arrivalBoundMs` ago. A lowered limit's answer waits until
   * none may (docs/adr/0012), so no window that begins after the answer holds a request of the
   * old limit.
   */
  mayStillArrive(now: number): boolean {
    this.prune(now);
    for (let i = this.head; i < this.sends.length; i++)
      if (this.latestArrival(this.sends[i] as SendHandle) > now) return true;
    return false;
  }

  /** Cheap check: surely room for one more at `now` (no scan). */
  surelyRoom(now: number, limit: number, queued: number): boolean {
    this.prune(now);
    return this.size + queued < limit;
  }

  /** Sends that may still count; for tests and memory accounting. */
  get size(): number {
    return this.sends.length - this.head;
  }

  /** Drops sends from the front that no longer count; stops at one still counting. */
  private prune(now: number): void {
    while (this.head < this.sends.length && this.occupiedUntil(this.sends[this.head] as SendHandle) <= now) {
      this.head++;
    }
    if (this.head > 1024 && this.head * 2 > this.sends.length) {
      this.sends = this.sends.slice(this.head);
      this.head = 0;
    }
  }
}
