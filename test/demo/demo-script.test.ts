import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { ed25519PublicKey } from '../cloud/ssh-key-fixtures.js';
import { redisDb } from '../support/gpuops-process.js';
import { pngHeader } from '../support/png.js';
import { type DemoProcess, descendantsOf, isAlive, spawnDemo } from './demo-process.js';

// `gpuops demo` end to end, as the README's first command runs it: a child process with no Slack and
// no cloud account. A script drives the terminal chat; we read what a person would see on standard
// output, and check that nothing the demo started (redis-server, Prometheus, the simulator in the
// process itself) nor any of its temporary folders is left once it exits.

let work: string;
const running: DemoProcess[] = [];

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'gpuops-demo-test-'));
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((p) => p.kill()));
});
afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

/** A folder of the test's own to be the demo's TMPDIR, so we can see that it leaves nothing there. */
function freshDir(name: string): string {
  return mkdtempSync(join(work, `${name}-`));
}

/** What is left in a TMPDIR, the TypeScript loader's own cache (tsx-<uid>, not the demo's) aside. */
function leftIn(dir: string): string[] {
  return readdirSync(dir).filter((name) => !/^tsx-\d+$/.test(name));
}

function script(name: string, lines: readonly string[]): string {
  const file = join(work, `${name}.txt`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** The lines the demo printed after the prompt line of `command` up to the next prompt. */
function answerTo(out: string, command: string): string {
  const at = out.indexOf(`› ${command}\n`);
  if (at < 0) throw new Error(`"${command}" was not run; output:\n${out}`);
  const rest = out.slice(at + command.length + 3);
  const next = rest.search(/^[a-z]+ in #[\w-]+› /m);
  return next < 0 ? rest : rest.slice(0, next);
}

describe('gpuops demo --script (shape A, its own Redis and Prometheus)', () => {
  it('lists, creates, stops, starts, approves, charts, adds a key and a Slurm user, then leaves nothing behind', async () => {
    const temp = freshDir('tmp-a');
    const files = freshDir('files-a');
    const key = ed25519PublicKey('ada@laptop');
    const file = script('shape-a', [
      '# Ada adds her SSH key through its form (one line per field) and joins the seeded Slurm cluster',
      '/gpu keys add',
      'ada-laptop',
      key,
      '/gpu slurm adduser slurm-1',
      '/gpu ls',
      '/gpu create train-1 h100-hgx-80gb.1x',
      '/gpu stop train-1',
      '/gpu start train-1',
      '# Ada stops train-1 every weekday evening in her time zone; Bob reads the next run in his',
      '/gpu schedule stop train-1 weekdays 20:00',
      '/gpu schedules',
      '# A workflow stops it (nothing posted: no channel), then starts it in this channel',
      '/step stop_instance instance=train-1 channel_id=',
      '/step start_instance instance=train-1',
      '# $23.12/h is above the demo policy threshold: Bob approves',
      '/gpu create big-1 h100-hgx-80gb.8x',
      '/as bob',
      '/press Approve',
      '/gpu schedules',
      '/as ada',
      '/gpu metrics demo-1 --range 15m',
      '/gpu ls',
    ]);
    const demo = spawnDemo(
      ['--script', file, '--shape', 'A', '--files', files, '--transition-ms', '500', '--timeout', '60'],
      { env: { TMPDIR: temp } },
    );
    running.push(demo);

    await demo.waitForOutput('Ready.', 90_000);
    const started = descendantsOf(demo.child.pid!);
    expect(started.map((p) => p.name)).toEqual(expect.arrayContaining(['redis-server', 'prometheus']));

    const exit = await demo.exited;
    const out = demo.stdout();
    expect(exit, `stderr: ${demo.stderr()}\n${out}`).toEqual({ code: 0, signal: null });

    const keyForm = answerTo(out, '/gpu keys add');
    expect(keyForm).toContain('form opened for you (@ada)\n▣ Add an SSH key  (Add key · Cancel)');
    expect(keyForm).toMatch(/Key name \(required\)\n {2}e\.g\. laptop — text> ada-laptop\n/);
    expect(keyForm).toContain('Form submitted.');
    expect(keyForm).toContain('✅ Done · `/gpu keys add ada-laptop`');
    expect(keyForm).toContain('Owner: @ada');
    expect(answerTo(out, '/gpu slurm adduser slurm-1')).toMatch(
      /Added you to slurm-1 as ada_lovelace \(from your Slack name.*with 1 SSH key, without sudo/,
    );
    expect(answerTo(out, '/gpu ls')).toContain('🟢 demo-1 · h100-hgx-80gb.1x · running');

    const create = answerTo(out, '/gpu create train-1 h100-hgx-80gb.1x');
    expect(create).toMatch(
      /#\d+ gpuops in #gpu-ops\n {2}⏳ Queued · `\/gpu create train-1 h100-hgx-80gb.1x`/,
    );
    expect(create).toMatch(/#\d+ edited · gpuops in #gpu-ops\n {2}✅ Done · `\/gpu create train-1/);
    expect(create).toContain('train-1 is running at');
    expect(create).toContain('State: 🟢 running');
    // How to reach it: the policy's default login user and the key Ada added above, by fingerprint.
    expect(create).toMatch(
      /🔑 Log in: `ssh ubuntu@\d+\.\d+\.\d+\.\d+` with your SSH key ada-laptop \(`ssh-ed25519 SHA256:[A-Za-z0-9+/]+`\)\./,
    );
    expect(answerTo(out, '/gpu stop train-1')).toContain('train-1 is stopped');
    expect(answerTo(out, '/gpu start train-1')).toContain('train-1 is running');

    const scheduled = answerTo(out, '/gpu schedule stop train-1 weekdays 20:00');
    expect(scheduled).toMatch(
      /✅ Done · `\/gpu schedule stop train-1 weekdays 20:00`\n {2}Scheduled `s-[0-9a-f]{12}`: stop train-1 weekdays 20:00 \(Europe\/London\)/,
    );
    expect(answerTo(out, '/gpu schedules')).toMatch(
      /stop train-1 · weekdays 20:00 Europe\/London · next \w{3} \d+ \w{3}, 20:00 your time/,
    );
    const bobsList = out.slice(out.lastIndexOf('› /gpu schedules'));
    expect(bobsList).toMatch(/next \w{3} \d+ \w{3}, 1[56]:00 your time/);
    expect(bobsList).toContain('Times in your time zone (America/New_York)');
    const stepStop = answerTo(out, '/step stop_instance instance=train-1 channel_id=');
    expect(stepStop).toContain('A workflow runs the step stop_instance for @ada…');
    expect(stepStop).toMatch(
      /Workflow step stop_instance completed:\n {2}instance_name: train-1\n {2}instance_id: \S+\n {2}state: stopped\n/,
    );
    expect(stepStop).not.toContain('gpuops in #gpu-ops');
    const stepStart = answerTo(out, '/step start_instance instance=train-1');
    expect(stepStart).toMatch(/✅ Done · `\/gpu start train-1`/);
    expect(stepStart).toMatch(
      /Workflow step start_instance completed:[\s\S]*state: running\n {2}ip_address: \d+\.\d+\.\d+\.\d+/,
    );

    // The costly create waits for Bob's button; Ada's own request message says so, then goes on.
    const big = answerTo(out, '/gpu create big-1 h100-hgx-80gb.8x');
    expect(big).toContain('Approval needed · `/gpu create big-1 h100-hgx-80gb.8x` asked by @ada');
    expect(big).toContain('$23.12/h');
    const buttons = /\[(\d+)\] Approve {2}\[(\d+)\] Deny/.exec(big);
    expect(buttons).not.toBeNull();
    expect(big).not.toContain('big-1 is running');
    const approve = answerTo(out, '/press Approve');
    expect(approve).toContain(`@bob pressed [${buttons![1]}] Approve`);
    expect(approve).toContain('Approved by @bob');
    expect(approve).toContain('big-1 is running');

    const metrics = answerTo(out, '/gpu metrics demo-1 --range 15m');
    expect(metrics).toContain('GPU utilisation of demo-1 over the last 15m: the chart is in the thread.');
    const saved = /📎 .* saved to (\S+\.png)/.exec(metrics);
    expect(saved?.[1]).toBe(join(files, 'metrics-demo-1-15m.png'));
    expect(pngHeader(readFileSync(saved![1]!))).toEqual({ width: 1000, height: 560 });

    const list = out.slice(out.lastIndexOf('› /gpu ls'));
    expect(list).toContain('Instances (3)');
    expect(list).toMatch(/🟢 big-1 · h100-hgx-80gb.8x · running/);
    expect(list).toMatch(/🟢 train-1 · h100-hgx-80gb.1x · running/);

    // Nothing left: no process it started, no folder of its own (the kept --files folder aside).
    expect(started.filter((p) => isAlive(p.pid))).toEqual([]);
    expect(isAlive(demo.child.pid!)).toBe(false);
    expect(leftIn(temp)).toEqual([]);
    expect(out).toMatch(
      /Stopped listener and workers, local Slack API, simulator, Redis; removed \S+gpuops-demo-/,
    );
  }, 180_000);
});

describe('gpuops demo with lines on standard input and REDIS_URL', () => {
  const db = 9;
  let redis: Redis;
  let redisUrl: string;

  beforeAll(async () => {
    redisUrl = redisDb(inject('redisUrl'), db);
    redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    await redis.flushdb();
  });
  afterAll(async () => {
    await redis.flushdb().catch(() => {});
    redis.disconnect();
  });

  it('exits non-zero naming each line that failed: a job that ended Failed and a refused command', async () => {
    const temp = freshDir('tmp-fail');
    const demo = spawnDemo(['--no-metrics', '--transition-ms', '300'], {
      env: { TMPDIR: temp, REDIS_URL: redisUrl },
      pipeStdin: true,
    });
    running.push(demo);
    demo.child.stdin!.end(
      ['/gpu ls', '/gpu show nosuch', '/gpu frobnicate', '/channel ops', '/gpu jobs', '/press 7', ''].join(
        '\n',
      ),
    );
    const exit = await demo.exited;
    const out = demo.stdout();
    expect(exit.code, out).toBe(1);
    // A name that is not there is answered at once, to the requester alone: no job is made for it.
    expect(answerTo(out, '/gpu show nosuch')).toContain('No instance "nosuch" in this project.');
    expect(answerTo(out, '/gpu show nosuch')).not.toContain('Failed');
    expect(answerTo(out, '/gpu frobnicate')).toContain('There is no subcommand "frobnicate".');
    // Jobs are listed per channel: #ops has none of #gpu-ops' jobs.
    expect(out).toContain('ada in #ops› /gpu jobs');
    expect(answerTo(out, '/gpu jobs')).toContain('No jobs in this channel yet.');
    expect(answerTo(out, '/press 7')).toContain(
      'There is no button [7] on screen; press one shown in [brackets], by its number or its label.',
    );
    expect(demo.stderr()).toContain('gpuops demo: 3 of 6 lines failed:');
    expect(demo.stderr()).toContain('line 2: /gpu show nosuch');
    expect(demo.stderr()).toContain('line 3: /gpu frobnicate');
    expect(demo.stderr()).toContain('line 6: /press 7');
    expect(demo.stderr()).not.toMatch(/line [145]:/);
    // It used the Redis it was given and started none of its own.
    expect(out).toContain('Redis: redis://127.0.0.1:');
    expect(leftIn(temp)).toEqual([]);
    expect(await redis.dbsize()).toBeGreaterThan(0);
  }, 120_000);

  it('refuses to share a queue with gpuops workers already on that Redis', async () => {
    const first = spawnDemo(['--no-metrics'], { env: { REDIS_URL: redisUrl }, pipeStdin: true });
    running.push(first);
    await first.waitForOutput('Ready.', 60_000);
    const second = spawnDemo(['--no-metrics'], { env: { REDIS_URL: redisUrl }, pipeStdin: true });
    running.push(second);
    second.child.stdin!.end();
    const exit = await second.exited;
    expect(exit.code).toBe(1);
    expect(second.stderr()).toContain('gpuops worker(s) on its queue: the demo would take their jobs');
    first.child.stdin!.end('/quit\n');
    expect((await first.exited).code).toBe(0);
  }, 120_000);
});

describe('gpuops demo --script: the summary of failed lines', () => {
  const db = 10;
  let redisUrl: string;

  beforeAll(async () => {
    redisUrl = redisDb(inject('redisUrl'), db);
    const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    await redis.flushdb();
    redis.disconnect();
  });

  it('gives each failed line once, with the reason the chat gave as the chat shows it, cut at a word; the rest still runs', async () => {
    const longKey = `ssh-ed25519 ${'A'.repeat(5000)}`;
    const keyLine = `/gpu keys add k1 ${longKey}`;
    const file = script('summary', [
      '/gpu create t1 h100-hgx-80gb.1x --tag a=1 --tag a=2',
      keyLine,
      '/as carol',
      '/gpu create c1 h100-hgx-80gb.1x',
      '/as ada',
      '/gpu show nosuchbox',
      '/gpu help',
      '/gpu ls',
      '/gpu rm demo-1',
      '/press Approve',
    ]);
    const demo = spawnDemo(['--script', file, '--no-metrics', '--transition-ms', '200', '--timeout', '60'], {
      env: { TMPDIR: freshDir('tmp-summary'), REDIS_URL: redisUrl },
    });
    running.push(demo);
    const exit = await demo.exited;
    const out = demo.stdout();
    const err = demo.stderr();
    expect(exit.code, `${err}\n${out}`).toBe(1);
    const summary = err.slice(err.indexOf('gpuops demo: '));
    expect(summary.split('\n')[0]).toBe('gpuops demo: 5 of 10 lines failed:');

    // The precise reason the bot gave, not "gpuops did not understand".
    expect(summary).not.toContain('did not understand');
    expect(summary).toContain(
      '  line 1: /gpu create t1 h100-hgx-80gb.1x --tag a=1 --tag a=2\n    The tag "a" was given twice; give each key once.\n',
    );
    // The 5,000-character line once, abbreviated, with its own reason.
    expect(summary).toMatch(
      new RegExp(
        `\\n {2}line 2: /gpu keys add k1 ssh-ed25519 A+… \\(${keyLine.length} characters\\)\\n {4}That public key is not valid: [^\\n]+\\n`,
      ),
    );
    expect(err.match(/A{10,}/g)).toHaveLength(1);
    expect(err.length).toBeLessThan(2000);

    // Markup as the chat draws it (no *bold* marks, <@U0BOB> as @bob), cut after a whole word.
    const refusal = /\n {2}line 4: \/gpu create c1 h100-hgx-80gb\.1x\n {4}([^\n]+)\n/.exec(summary)?.[1];
    expect(refusal).toBeDefined();
    expect(refusal).toMatch(/^`\/gpu create` needs the operator role, and you have viewer .*@bob.*…$/);
    expect(refusal).not.toMatch(/\*|<@/);
    const shownInChat = answerTo(out, '/gpu create c1 h100-hgx-80gb.1x')
      .split('\n')
      .find((line) => line.includes('needs the operator role'))!
      .replace(/^\s*┆ /, '');
    const kept = refusal!.slice(0, -1);
    expect(shownInChat.startsWith(kept)).toBe(true);
    expect(shownInChat[kept.length]).toBe(' ');

    expect(summary).toContain('  line 6: /gpu show nosuchbox\n    No instance "nosuchbox" in this project.');
    // Ada pressing Approve on her own request is refused: that line failed too, in the chat's words.
    expect(summary).toContain(
      '  line 10: /press Approve\n    You asked for this yourself, so someone else has to approve it. Nothing was changed.',
    );
    expect(summary).not.toMatch(/line [35789]:/);

    // The lines after the failures ran: help with its headers drawn as bold, and the list.
    const help = answerTo(out, '/gpu help');
    expect(help).toContain('┆ `/gpu` — GPU cloud from Slack\n');
    expect(help).not.toContain('*`/gpu`');
    expect(answerTo(out, '/gpu ls')).toContain('demo-1 · h100-hgx-80gb.1x');
  }, 120_000);

  it('exits when its script ends while a workflow step still waits for an approver, and says it was waiting', async () => {
    const file = script('step-waits', ['/step create_instance name=wf-1 instance_type=h100-hgx-80gb.8x']);
    const demo = spawnDemo(['--script', file, '--no-metrics', '--transition-ms', '200'], {
      env: { TMPDIR: freshDir('tmp-step-waits'), REDIS_URL: redisUrl },
    });
    running.push(demo);
    const exit = await demo.exited;
    const out = demo.stdout();
    expect(exit, `${demo.stderr()}\n${out}`).toEqual({ code: 0, signal: null });
    expect(out).toContain('Approval needed');
    expect(out).toContain('The step create_instance is still running (waiting for an approver?)');
  }, 120_000);
});

describe('gpuops demo and Ctrl-C', () => {
  it('stops everything it started on SIGINT, with no process or folder left', async () => {
    const temp = freshDir('tmp-int');
    const demo = spawnDemo(['--no-metrics'], { env: { TMPDIR: temp }, pipeStdin: true });
    running.push(demo);
    await demo.waitForOutput('Ready.', 60_000);
    const started = descendantsOf(demo.child.pid!);
    expect(started.map((p) => p.name)).toContain('redis-server');
    expect(leftIn(temp).some((d) => d.startsWith('gpuops-demo-'))).toBe(true);
    demo.child.kill('SIGINT');
    const exit = await demo.exited;
    expect(exit.code).toBe(130);
    expect(demo.stdout()).toContain('Stopped listener and workers');
    expect(started.filter((p) => isAlive(p.pid))).toEqual([]);
    expect(leftIn(temp)).toEqual([]);
    expect(existsSync(temp)).toBe(true);
  }, 90_000);
});
