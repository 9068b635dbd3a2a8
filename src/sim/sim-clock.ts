// The simulator's clock: real time (plus whatever was advanced) or manual (moves only when advanced).
// Transitions are kept in one min-heap with a single timer, so 10,000 pending transitions cost one timer.

export type ClockMode = 'real' | 'manual';

export interface SimClock {
  readonly mode: ClockMode;
  /** Milliseconds since the epoch, as the simulated cloud sees it. */
  now(): number;
  /** Moves the clock forward and runs every transition that became due, in time order. */
  advance(ms: number): Promise<void>;
  /** Runs `fn` once the clock reaches `time`. */
  at(time: number, fn: () => void): void;
  /** Drops every scheduled transition (reset). */
  clear(): void;
  close(): void;
}

interface Entry {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
}

const before = (x: Entry, y: Entry): boolean => x.at < y.at || (x.at === y.at && x.seq < y.seq);

export function createSimClock(mode: ClockMode, onError: (err: unknown) => void = () => {}): SimClock {
  const start = Date.now();
  let offset = 0;
  let seq = 0;
  let heap: Entry[] = [];
  let timer: NodeJS.Timeout | undefined;
  let armedAt = Number.POSITIVE_INFINITY;
  let closed = false;

  const now = (): number => (mode === 'real' ? Date.now() + offset : start + offset);

  const push = (e: Entry): void => {
    heap.push(e);
    let i = heap.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(heap[i]!, heap[p]!)) break;
      [heap[i], heap[p]] = [heap[p]!, heap[i]!];
      i = p;
    }
  };
  const pop = (): Entry | undefined => {
    const top = heap[0];
    const last = heap.pop();
    if (heap.length > 0 && last) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && before(heap[l]!, heap[m]!)) m = l;
        if (r < heap.length && before(heap[r]!, heap[m]!)) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m]!, heap[i]!];
        i = m;
      }
    }
    return top;
  };

  const runDue = (): void => {
    const t = now();
    while (heap.length > 0 && heap[0]!.at <= t) {
      const e = pop()!;
      try {
        e.fn();
      } catch (err) {
        onError(err);
      }
    }
  };

  const arm = (): void => {
    if (mode !== 'real' || closed) return;
    const next = heap[0];
    if (!next) {
      if (timer) clearTimeout(timer);
      timer = undefined;
      armedAt = Number.POSITIVE_INFINITY;
      return;
    }
    if (timer && armedAt <= next.at) return;
    if (timer) clearTimeout(timer);
    armedAt = next.at;
    timer = setTimeout(
      () => {
        timer = undefined;
        armedAt = Number.POSITIVE_INFINITY;
        runDue();
        arm();
      },
      Math.min(Math.max(0, next.at - now()), 2_147_483_647),
    );
    timer.unref();
  };

  return {
    mode,
    now,
    advance: async (ms) => {
      if (!Number.isFinite(ms) || ms < 0)
        throw new RangeError('advance needs a non-negative number of milliseconds');
      offset += ms;
      runDue();
      arm();
    },
    at: (time, fn) => {
      push({ at: time, seq: seq++, fn });
      // A transition of 0 ms is done before the request that started it answers (benchmarks use it).
      if (mode === 'real' && time <= now()) runDue();
      arm();
    },
    clear: () => {
      heap = [];
      arm();
    },
    close: () => {
      closed = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      heap = [];
    },
  };
}
