import { createHmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { benchPersonId } from './bench-people.js';

// The load generator of the acknowledgement benchmark, in a process of its own so it never shares an
// event loop with the app it measures: `node --import tsx bench/support/load-generator.ts` with the
// plan (LoadPlan) as JSON in LOAD_PLAN. It sends signed `/gpu <text>` requests as Slack would, keeps `concurrency`
// of them in flight over an undici Pool, and prints one JSON line (LoadReport) when done.

export interface LoadPlan {
  /** Origin of the app, e.g. http://127.0.0.1:3000. */
  readonly origin: string;
  readonly path: string;
  readonly secret: string;
  readonly text: string;
  readonly count: number;
  readonly concurrency: number;
  /** Requests sent first and not measured (connections, JIT). */
  readonly warmup: number;
  /** Prefix of the user ids; each request comes from its own user so none is a repeat of another. */
  readonly userPrefix: string;
  /**
   * Instead, the requests come from this many people in turn (benchPersonId), each from a channel of
   * its own (named after userPrefix), so none is a repeat of another either.
   */
  readonly people?: number;
  /**
   * With `people`: the requests go to this many channels in turn (request n to channel n mod
   * channels), each person's through every channel before any again, so a person repeats in a channel
   * only after channels × people requests; default: a channel of its own for each request.
   */
  readonly channels?: number;
  /**
   * Open loop: request i is due at start + i / rate, whatever the answers before it did, and its
   * latency counts from when it was due (so a slow app cannot hide its queue). Default: closed loop,
   * `concurrency` requests in flight.
   */
  readonly ratePerSecond?: number;
}

export interface LoadReport {
  /** Milliseconds from sending to the full answer, in sending order. */
  readonly latenciesMs: number[];
  readonly statuses: Record<string, number>;
  /** Bodies of a few answers, to check what the app said. */
  readonly samples: string[];
  readonly elapsedMs: number;
  readonly errors: number;
}

function body(plan: LoadPlan, n: number): string {
  return new URLSearchParams({
    token: 'legacy-verification-token',
    team_id: 'T0BENCH',
    team_domain: 'bench',
    channel_id: plan.people ? `C${plan.userPrefix}${plan.channels ? n % plan.channels : n}` : 'C0BENCH',
    channel_name: 'bench',
    user_id: plan.people
      ? benchPersonId(Math.floor(n / (plan.channels ?? 1)) % plan.people)
      : `${plan.userPrefix}${n}`,
    user_name: `user${n}`,
    command: '/gpu',
    text: plan.text,
    api_app_id: 'A0BENCH',
    is_enterprise_install: 'false',
    response_url: `http://127.0.0.1:9/commands/T0BENCH/${n}/none`,
    trigger_id: `${Date.now()}.${n}.bench`,
  }).toString();
}

async function send(
  pool: Pool,
  plan: LoadPlan,
  n: number,
  dueAt?: number,
): Promise<{ ms: number; status: number; text: string }> {
  const raw = body(plan, n);
  const timestamp = Math.floor(Date.now() / 1000);
  const signature = `v0=${createHmac('sha256', plan.secret).update(`v0:${timestamp}:${raw}`).digest('hex')}`;
  // Open loop: from when the request was due, so time spent waiting to be sent counts too (a timer
  // that fired a little early counts from the send).
  const started = Math.min(dueAt ?? Number.POSITIVE_INFINITY, performance.now());
  const res = await pool.request({
    method: 'POST',
    path: plan.path,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': String(timestamp),
      'x-slack-signature': signature,
    },
    body: raw,
  });
  const text = await res.body.text();
  return { ms: performance.now() - started, status: res.statusCode, text };
}

async function phase(
  pool: Pool,
  plan: LoadPlan,
  first: number,
  count: number,
  record: boolean,
): Promise<Omit<LoadReport, 'elapsedMs'>> {
  const latenciesMs: number[] = new Array(count);
  const statuses: Record<string, number> = {};
  const samples: string[] = [];
  let errors = 0;
  let next = 0;
  const rate = record ? plan.ratePerSecond : undefined;
  const t0 = performance.now();
  const lane = async () => {
    for (;;) {
      const i = next++;
      if (i >= count) return;
      const dueAt = rate ? t0 + (i * 1000) / rate : undefined;
      if (dueAt !== undefined && dueAt > performance.now()) await sleep(dueAt - performance.now());
      try {
        const r = await send(pool, plan, first + i, dueAt);
        latenciesMs[i] = r.ms;
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        if (record && samples.length < 3) samples.push(r.text);
      } catch {
        errors++;
        latenciesMs[i] = Number.NaN;
      }
    }
  };
  // Open loop: enough lanes that a request is never held back by answers still to come.
  const lanes = rate ? Math.max(plan.concurrency, 500) : plan.concurrency;
  await Promise.all(Array.from({ length: lanes }, lane));
  return { latenciesMs, statuses, samples, errors };
}

async function main(): Promise<void> {
  const plan = JSON.parse(process.env.LOAD_PLAN ?? '{}') as LoadPlan;
  const pool = new Pool(plan.origin, {
    connections: plan.ratePerSecond ? Math.max(plan.concurrency, 500) : plan.concurrency,
    pipelining: 1,
  });
  try {
    if (plan.warmup > 0) await phase(pool, plan, 1_000_000, plan.warmup, false);
    const started = performance.now();
    const result = await phase(pool, plan, 0, plan.count, true);
    const report: LoadReport = { ...result, elapsedMs: performance.now() - started };
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } finally {
    await pool.close();
  }
}

await main();
