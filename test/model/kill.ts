import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type fc from 'fast-check';
import type { FaultSpec } from '../../src/sim/fault-registry.js';
import type { BotStack } from '../support/bot-stack.js';
import { spawnScript } from '../support/gpuops-process.js';
import { until } from '../support/until.js';
import type { Model, Real, Verb } from './model.js';
import { expectation, TypedChange } from './typed.js';
import { actor, MODEL_POLICY_YAML } from './world.js';

// A worker killed (SIGKILL, as an OOM kill or a lost node) in the middle of a job. The model's bot runs
// in the test's own process, where closing a worker cannot stop the job it is running, so the kill is
// real: a worker in a process of its own (test/support/worker-entry.ts, as `gpuops worker`, with the
// model's policy and a one-second job lock) is started, the bot's own worker pauses so that the next
// job goes to it, the cloud holds that job's call (1.5 s) so that it dies with the call sent and no
// answer, and it is killed then. The bot's worker resumes and takes the job over once its lock runs
// out (a stalled check every 500 ms). The invariants are those of any request: one final answer, the
// state the request asked, never two machines for one create.

const OPERATION: Record<'start' | 'stop' | 'create', string> = {
  start: 'startInstance',
  stop: 'stopInstance',
  create: 'createInstance',
};

/**
 * Registers `spec` ahead of every fault already waiting, which keep their order and what is left of
 * their counts. The simulator gives a call to the first registered fault that matches it, so the
 * kill's hold would otherwise wait behind faults drawn earlier: after "the cloud answers 503 to the
 * next 10 createInstance call(s)", a create's six attempts (one send each) all met a 503 and the job
 * answered Failed without its call ever being held, and the step waited in vain for the call to kill
 * (seed 1388013625, docs/testing.md). The earlier faults apply after the kill instead. Nothing calls
 * the cloud meanwhile: the step starts at quiescence and the simulator runs in this process.
 */
function holdFirst(stack: BotStack, spec: FaultSpec): { id: string } {
  const control = stack.sim.control;
  const waiting: FaultSpec[] = control
    .faults()
    .filter((f) => f.remaining !== 0)
    .map((f) => ({
      operation: f.operation,
      ...(f.status !== undefined ? { status: f.status } : {}),
      ...(f.retryAfterSeconds !== undefined ? { retryAfterSeconds: f.retryAfterSeconds } : {}),
      latencyMs: f.latencyMs,
      hang: f.hang,
      rate: f.rate,
      ...(f.remaining !== null ? { count: f.remaining } : {}),
    }));
  control.clearFaults();
  const held = control.addFault(spec);
  for (const w of waiting) control.addFault(w);
  return held;
}

export class WorkerKilled implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly verb: 'start' | 'stop' | 'create',
    readonly machine: string,
  ) {}
  /** Only for a request that will run a job and call the cloud: a kill needs a job to kill. */
  check(model: Readonly<Model>): boolean {
    const want = expectation(model as Model, actor('ada'), this.verb as Verb, this.machine);
    return want.kind === 'runs' && !want.noop;
  }
  async run(model: Model, real: Real): Promise<void> {
    const { stack } = real;
    const own = stack.bot.parts.requestWorker;
    if (!own) throw new Error('the model stack runs no worker of its own');
    const dir = await mkdtemp(join(tmpdir(), 'gpuops-model-'));
    const policyFile = join(dir, 'policy.yaml');
    await writeFile(policyFile, MODEL_POLICY_YAML);
    const doomed = spawnScript('test/support/worker-entry.ts', {
      ...stack.env(),
      GPUOPS_POLICY: policyFile,
      LOCK_MS: '1000',
      STALLED_MS: '500',
      // Its start sets the schedulers' periods for every worker: the stack's, or the expiry runs once a
      // minute from then on (the soak's seed 1207352509: an approval then never expired in the model's 30 s).
      APPROVAL_EXPIRY_EVERY_MS: '200',
      REQUEST_SWEEP_EVERY_MS: '200',
      LOG_LEVEL: 'error',
    });
    let resumed = false;
    try {
      await doomed.waitForLog((r) => r.msg === 'worker ready', 60_000);
      await own.pause(true);
      const held = holdFirst(stack, { operation: OPERATION[this.verb], latencyMs: 1_500, count: 1 });
      const request = new TypedChange('ada', this.verb, this.machine, false).run(model, real);
      request.catch(() => {});
      // The job's call reached the cloud, from the other process: kill it now.
      await until(
        `the ${OPERATION[this.verb]} call of "${this}" to reach the cloud`,
        () => stack.sim.control.faults().find((f) => f.id === held.id && f.hits > 0),
        30_000,
      );
      await doomed.kill();
      await own.resume();
      resumed = true;
      await request;
    } finally {
      await doomed.kill();
      if (!resumed) await own.resume();
      await rm(dir, { recursive: true, force: true });
    }
  }
  toString(): string {
    return `a worker is killed while it runs /gpu ${this.verb} ${this.machine} as ada`;
  }
}
