import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../support/gpuops-process.js';
import type { Bot, Rig } from './support/reliability-rig.js';
import { slash, startRig, TYPE, WATCHING_POLICY } from './support/reliability-rig.js';

// A week of a busy team, compressed: commands of every delivery (channel jobs, private lookups, the
// listener's own answers), with a channel watching the project all along (a look every second, a
// notification per machine). Redis' memory is read every REPLAY_STEP commands. What must hold for
// Redis to stay bounded: every key gpuops writes either expires or belongs to a structure trimmed by
// a rule of docs/operations.md ("How long things are kept"). GPUOPS_REPLAY_COMMANDS sets the length
// (CI: 5,000; the full week: 100,000).

const COMMANDS = Number(process.env.GPUOPS_REPLAY_COMMANDS ?? 5_000);
const STEP = Number(process.env.GPUOPS_REPLAY_STEP ?? (COMMANDS >= 50_000 ? 10_000 : 1_000));
const SENDERS = 8;
const USERS = 200;
const CHANNELS = 40;

/** Keys without a TTL, by the rule that bounds them (docs/operations.md). Anything else is a leak. */
const BOUNDED: ReadonlyArray<[RegExp, string]> = [
  [
    /^\{gpuops\}:gpuops(-watch)?:/,
    'BullMQ: jobs removed after 7 days or 5,000 completed, 14 days or 5,000 failed',
  ],
  [/^gpuops:channel:[^:]+:jobs$/, 'job log of a channel: the last 200'],
  [/^gpuops:channel:[^:]+:project$/, 'a channel binding: one per channel'],
  [/^gpuops:audit$/, 'audit trail: trimmed to the retention'],
  [/^gpuops:\{watch\}:/, 'watcher state: one per project, channel or target'],
  [/^gpuops:\{approvals\}:pending$/, 'pending approvals: each leaves at its expiry'],
];

function familyOf(key: string): string {
  return key
    .replace(/^(\{gpuops\}:gpuops(-watch)?):.*$/, '$1 (BullMQ)')
    .replace(/^gpuops:(\{[a-z]+\}:)?([a-z-]+).*$/, 'gpuops:$1$2');
}

describe('a week of traffic in a bounded Redis', () => {
  let rig: Rig;
  let bot: Bot;

  beforeAll(async () => {
    rig = await startRig();
    const policy = await rig.policy(WATCHING_POLICY);
    bot = await rig.start('all', { env: { GPUOPS_POLICY: policy }, workerConcurrency: 8 });
    await rig.catalogue();
  }, 60_000);

  afterAll(async () => {
    await rig?.close();
  });

  it(
    'keeps every key expiring or trimmed while commands, notifications and watcher looks go by',
    async () => {
      const watch = await slash(rig, bot.url, 'watch on', { channelId: 'C0WATCHING' });
      expect(watch.response.status).toBe(200);
      const memory = async () => Number(/used_memory:(\d+)/.exec(await rig.redis.info('memory'))?.[1]);
      const samples: Array<{ commands: number; bytes: number; keys: number }> = [
        { commands: 0, bytes: await memory(), keys: await rig.redis.dbsize() },
      ];
      let next = 0;
      // Answered "Redis is full" (none may be: this Redis has no maxmemory), or "cannot reach Redis"
      // (the listener's deadline, met on cores starved by other work: a clear answer in time, counted).
      let full = 0;
      let unreachable = 0;
      let late = 0;
      const started = Date.now();
      await Promise.all(
        Array.from({ length: SENDERS }, async () => {
          for (let i = next++; i < COMMANDS; i = next++) {
            const userId = `U0R${i % USERS}`;
            const channelId = `C0R${i % CHANNELS}`;
            // Mostly lookups, some answers of the listener's own, a machine made now and then.
            const text =
              i % 100 === 0
                ? `create rp-${i} ${TYPE}`
                : i % 10 === 9
                  ? 'jobs'
                  : i % 10 === 8
                    ? `show rp-${(i % 50) * 100}`
                    : 'ls';
            const sent = await slash(rig, bot.url, text, { channelId, userId });
            // Bolt answers 404 to a request not acknowledged within Slack's 3 s: counted, since this
            // test is about memory (the acknowledgement's time is the subject of noisy-user and the bench).
            if (sent.response.status === 404) late++;
            else expect(sent.response.status).toBe(200);
            if (/is full/.test(sent.response.text)) full++;
            if (/cannot reach/.test(sent.response.text)) unreachable++;
            if ((i + 1) % STEP === 0) {
              const sample = { commands: i + 1, bytes: await memory(), keys: await rig.redis.dbsize() };
              samples.push(sample);
              // As it goes, so a long run that fails later still leaves its curve.
              console.info(
                `[reliability] bounded memory: ${sample.commands} commands after ${((Date.now() - started) / 1000).toFixed(0)} s: used_memory ${(sample.bytes / 1024 / 1024).toFixed(1)} MB, ${sample.keys} keys`,
              );
            }
          }
        }),
      );
      const seconds = (Date.now() - started) / 1000;
      expect(full).toBe(0);
      // A run of refusals would measure nothing: at most one command in a thousand.
      expect(unreachable).toBeLessThanOrEqual(COMMANDS / 1_000);
      await until(
        async () => ((await rig.pendingRequests()) === 0 ? true : undefined),
        'the queue to empty',
        120_000,
      );
      samples.push({ commands: COMMANDS, bytes: await memory(), keys: await rig.redis.dbsize() });

      // Every key: a TTL, or a structure with a trimming rule.
      const families = new Map<string, { keys: number; bytes: number; unbounded: number }>();
      let cursor = '0';
      const leaks: string[] = [];
      do {
        const [nextCursor, batch] = await rig.redis.scan(cursor, 'COUNT', 1000);
        cursor = nextCursor;
        for (const key of batch) {
          const [ttl, bytes] = await Promise.all([rig.redis.ttl(key), rig.redis.memory('USAGE', key)]);
          const family = familyOf(key);
          const f = families.get(family) ?? { keys: 0, bytes: 0, unbounded: 0 };
          f.keys++;
          f.bytes += Number(bytes ?? 0);
          if (ttl === -1) {
            f.unbounded++;
            if (!BOUNDED.some(([re]) => re.test(key))) leaks.push(key);
          }
          families.set(family, f);
        }
      } while (cursor !== '0');
      expect(leaks).toEqual([]);
      // The trimmed structures hold their rules.
      expect(await rig.redis.zcard('{gpuops}:gpuops:completed')).toBeLessThanOrEqual(5_000);
      expect(await rig.redis.zcard('{gpuops}:gpuops:failed')).toBeLessThanOrEqual(5_000);
      for (let c = 0; c < CHANNELS; c++) {
        expect(await rig.redis.llen(`gpuops:channel:C0R${c}:jobs`)).toBeLessThanOrEqual(200);
      }

      const mb = (b: number) => (b / 1024 / 1024).toFixed(1);
      const perStep = samples.map((s) => `${s.commands}: ${mb(s.bytes)} MB, ${s.keys} keys`).join('; ');
      const byFamily = [...families.entries()]
        .sort((a, b) => b[1].bytes - a[1].bytes)
        .slice(0, 12)
        .map(([name, f]) => `${name} ${f.keys} keys ${mb(f.bytes)} MB`)
        .join(', ');
      const grown = samples.at(-1)!.bytes - samples[0]!.bytes;
      console.info(
        `[reliability] bounded memory: ${COMMANDS} commands in ${seconds.toFixed(0)} s (${late} not acknowledged within 3 s, ${unreachable} answered "cannot reach Redis"), watcher looking every second; ` +
          `used_memory ${perStep}; ${Math.round(grown / COMMANDS)} bytes per command kept; by family: ${byFamily}`,
      );
    },
    120_000 + COMMANDS * 80,
  );
});
