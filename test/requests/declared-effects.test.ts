import { LogLevel, WebClient } from '@slack/web-api';
import { Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInfraClient } from '../../src/cloud/index.js';
import { staticToken } from '../../src/cloud/token-provider.js';
import { addFamily } from '../../src/commands/handlers.js';
import type { GpuCommand } from '../../src/commands/registry.js';
import type { JobData } from '../../src/jobs/job-data.js';
import { createLogger } from '../../src/log/logger.js';
import { acceptRequest } from '../../src/requests/accept-request.js';
import { runRateEffect } from '../../src/requests/run-rate-effect.js';
import { createReplyPort } from '../../src/slack/reply-port.js';
import { instanceTypeOf } from '../../src/store/instance-types-seen.js';
import { processCommandJob } from '../../src/workers/process-command-job.js';
import type { WorkerDeps } from '../../src/workers/worker-deps.js';
import { handlers } from '../fixtures/clone-family/handlers.js';
import { specs } from '../fixtures/clone-family/specs.js';
import {
  DEFAULT_PROJECT,
  type ListenerStack,
  policyOf,
  startListenerStack,
} from '../support/listener-stack.js';
import { until } from '../support/until.js';

// Issue 29's first point: a command added in a family of its own (test/fixtures/clone-family, two
// files) gets its guardrails from the effects its spec declares, with nothing else in gpuops changed:
// the machine it names is checked, it is priced by that machine's type and sent to an approver above
// the threshold, it is leased, the worker remembers the new machine's type, and its run rate is known
// for budgets. Its fields are `source` and `name`, so nothing here can come from a guessed field name.

addFamily({ specs, handlers });

const H100 = 'h100-hgx-80gb.8x';
const clone = (source: string, name: string) => ({ kind: 'clone', source, name }) as unknown as GpuCommand;
const ctx = () => ({
  teamId: 'T0FAKE',
  channelId: 'C0GPU',
  userId: 'U0ADA',
  projectId: DEFAULT_PROJECT,
  requestedAt: Date.now(),
});

function policy(threshold: number) {
  return policyOf(
    `effects-${threshold}.yaml`,
    'default_role: operator',
    'approvals:',
    '  approvers: { users: [U0BOB] }',
    `  threshold_per_hour: ${threshold}`,
    '  lease: { required_above_per_hour: 20, default: 8h, remind_before: 30m }',
  );
}

describe('a command in a family of its own, declared by its effects', () => {
  let stack: ListenerStack;
  let cheap: ListenerStack;
  beforeAll(async () => {
    // An H100 8x costs $23.12/h: above a threshold of 20, within one of 30; leased above 20 in both.
    [stack, cheap] = await Promise.all([
      startListenerStack(() => {}, { policy: policy(20) }),
      startListenerStack(() => {}, { policy: policy(30) }),
    ]);
    await Promise.all([stack.machines('train-01'), cheap.machines('train-01')]);
  });
  afterAll(async () => {
    await Promise.all([stack?.close(), cheap?.close()]);
  });

  it('refuses a clone of a machine that does not exist in one sentence, and queues nothing', async () => {
    const answer = acceptRequest(stack.deps, clone('trian-01', 'copy-1'), ctx());
    // A name the cached listing lacks may be seconds old: the pipeline asks for a fresh listing, which
    // a worker would make; the test makes it, and the source still does not exist.
    await until('a fresh listing asked for', async () =>
      (await stack.systemJobs()).find((j) => j.id?.includes('-now-')),
    );
    await stack.machines('train-01');
    const result = await answer;
    expect(result.status).toBe('rejected');
    expect((result as { plain: string }).plain).toBe(
      'No instance "trian-01" in this project. Did you mean train-01? (/gpu ls lists them.)',
    );
    expect(await stack.jobs()).toEqual([]);
  });

  it("prices the clone by its source's type and sends it to an approver above the threshold", async () => {
    const result = await acceptRequest(stack.deps, clone('train-01', 'copy-2'), ctx());
    expect(result.status).toBe('pending-approval');
    const card = stack.slack.calls
      .filter((c) => c.method === 'chat.postMessage')
      .map((c) => JSON.stringify(c.body))
      .join('\n');
    expect(card).toContain('$23.12/h');
  });

  it('leases the clone, and the worker remembers the new machine and starts its lease', async () => {
    const result = await acceptRequest(cheap.deps, clone('train-01', 'copy-3'), ctx());
    expect(result.status).toBe('queued');
    const [queued] = await cheap.jobs();
    expect(queued?.data).toMatchObject({ command: { kind: 'clone' }, lease: { seconds: 8 * 3600 } });

    const web = new WebClient('xoxb-listener', {
      slackApiUrl: cheap.slack.apiUrl,
      logLevel: LogLevel.ERROR,
      retryConfig: { retries: 0 },
    });
    const log = createLogger({ level: 'silent' });
    // The handler never calls the cloud: a client to a closed port proves it.
    const cloud = createInfraClient({
      baseUrl: 'http://127.0.0.1:9',
      shape: 'B',
      tokens: staticToken('unused'),
      projectId: DEFAULT_PROJECT,
    });
    const deps: WorkerDeps = {
      cloud,
      slack: web,
      store: cheap.store,
      log,
      shape: 'B',
      defaultProjectId: DEFAULT_PROJECT,
      reply: createReplyPort({ client: web, log }),
      guardrails: cheap.guardrails,
      queue: cheap.queue,
      timing: { progressQuietMs: 0 },
    };
    const job = (await Job.fromId<JobData>(cheap.queue, queued!.id!))!;
    const detail = await processCommandJob(job, deps, new AbortController().signal);
    await cloud.close();
    expect(detail).toMatch(/^copy-3 is a copy of train-01\. Leased: it stops at /);
    expect(await instanceTypeOf(cheap.store, DEFAULT_PROJECT, 'copy-3', undefined)).toBe(H100);
    expect(await cheap.guardrails.leases.get(queued!.id!)).toMatchObject({
      instance: 'copy-3',
      owner: 'U0ADA',
    });
  });

  it('says how much run rate the clone adds, on which project and type', () => {
    const prices = {
      configurations: [{ gpuType: 'H100_SXM5_80GB', pricePerGpuHour: '2.89', stoppedPricePerHour: '0.10' }],
    };
    expect(
      runRateEffect(clone('train-01', 'copy-4'), { prices, projectId: DEFAULT_PROJECT, targetType: H100 }),
    ).toMatchObject({ projectId: DEFAULT_PROJECT, instanceType: H100, machines: 1, perHour: 23.12 });
  });
});
