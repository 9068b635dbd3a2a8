import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFRESH_ACTION } from '../../src/commands/forms/catalog-blocks.js';
import { OPEN_FORM_ACTION, openFormButton } from '../../src/commands/forms/open-form-button.js';
import type { StoredView } from '../../src/devkit/fake-slack-api.js';
import { addSystemJob, CATALOG_SCHEDULER_ID } from '../../src/jobs/system-jobs.js';
import { readCatalog } from '../../src/store/catalog-cache.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { blockActionsPayload, viewSubmissionPayload } from '../support/slack-driver.js';
import { until } from '../support/until.js';

const CHANNEL = 'C0GPU';
const ED25519 = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFuyvIwN8SVrspCLSMqeCCUbe1WBH+UgcwkB1g3duGfL ada@laptop';

/** A field as the person left it: text typed, one option picked, or several ticked or picked. */
type Field = string | { readonly picked: string } | readonly string[];
type Fields = Record<string, Field>;

/** view.state.values as Slack sends them for the given fields. */
function stateValues(fields: Fields): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [block, v] of Object.entries(fields)) {
    const option = (value: string) => ({ text: { type: 'plain_text', text: value }, value });
    out[block] = {
      value:
        typeof v === 'string'
          ? { type: 'plain_text_input', value: v }
          : 'picked' in v
            ? { type: 'static_select', selected_option: option((v as { picked: string }).picked) }
            : { type: 'multi_static_select', selected_options: (v as readonly string[]).map(option) },
    };
  }
  return out;
}

/** Types `/gpu <text>` with a trigger id the fake checks (issued now, valid for 3 s, once). */
async function openFromCommand(stack: BotStack, text: string): Promise<{ view: StoredView; ack: string }> {
  const triggerId = stack.slack.issueTriggerId();
  const since = stack.slack.mark();
  const { response } = await stack.command(text, { triggerId });
  expect(response.status).toBe(200);
  const call = await stack.slack.waitFor('views.open', (c) => c.body.trigger_id === triggerId, 3_000, since);
  expect(call.response).toMatchObject({ ok: true });
  const id = (call.response as { view: { id: string } }).view.id;
  return { view: stack.slack.views.get(id)!, ack: response.text };
}

/** Presses Submit on an open form with these fields. */
function submit(stack: BotStack, stored: StoredView, fields: Fields) {
  return stack.interact(
    viewSubmissionPayload({
      callbackId: String(stored.view.callback_id),
      values: stateValues(fields),
      privateMetadata: String(stored.view.private_metadata),
      viewId: stored.id,
      hash: stored.hash,
      blocks: stored.view.blocks as unknown[],
    }),
  );
}

/** Waits for the channel message a form request posted to end in `phase`. */
async function finalMessage(stack: BotStack, since: number, phase: 'Done' | 'Failed') {
  const posted = await stack.slack.waitFor(
    'chat.postMessage',
    (c) => c.body.channel === CHANNEL,
    5_000,
    since,
  );
  const ts = String((posted.response as { ts: string }).ts);
  await stack.slack.waitFor(
    'chat.update',
    (c) => c.body.ts === ts && String(c.body.text).startsWith(`${phase}:`),
    20_000,
  );
  return stack.slack.message(CHANNEL, ts)!;
}

/** Every value the stack keeps in Redis (job data, job log, cache, sealed values), as text. */
async function redisText(redis: Redis, prefixes: readonly string[]): Promise<string> {
  const parts: string[] = [];
  for (const prefix of prefixes) {
    for (const key of await redis.keys(`${prefix}*`)) {
      const type = await redis.type(key);
      if (type === 'string') parts.push((await redis.get(key)) ?? '');
      else if (type === 'hash') parts.push(JSON.stringify(await redis.hgetall(key)));
      else if (type === 'list') parts.push(JSON.stringify(await redis.lrange(key, 0, -1)));
      else if (type === 'set') parts.push(JSON.stringify(await redis.smembers(key)));
      else if (type === 'zset') parts.push(JSON.stringify(await redis.zrange(key, '0', '-1')));
      else if (type === 'stream') parts.push(JSON.stringify(await redis.xrange(key, '-', '+')));
    }
  }
  return parts.join('\n');
}

/** Waits until the scheduled refresh has written the project's catalogue. */
async function catalogueWritten(stack: BotStack, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const entry = await readCatalog(stack.store, stack.sim.info.projectId);
    if (entry) return entry;
    if (Date.now() > deadline) throw new Error('the catalogue was not written in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Asserts secrets reached no Slack call, no log line, and nothing in Redis but their sealed form. */
async function expectNowhere(stack: BotStack, needles: readonly string[]) {
  const slackBodies = JSON.stringify(stack.slack.calls.map((c) => c.body));
  const stored = await redisText(stack.redis, [stack.queuePrefix, stack.storePrefix]);
  for (const needle of needles) {
    expect(slackBodies).not.toContain(needle);
    expect(stack.logLines.filter((l) => l.includes(needle))).toEqual([]);
    expect(stored).not.toContain(needle);
  }
  // The scan did see the job's data (it keeps only the sealed reference) and the debug log.
  expect(stored).toContain('sealedRef');
  expect(stack.logLines.some((l) => l.includes('"level":"debug"'))).toBe(true);
}

describe.each(['A', 'B', 'C'] as const)('the create-instance form, shape %s', (shape) => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape, captureLogs: true, slack: { strictTriggerIds: true } });
    // The refresh the bot schedules at start; in shape C once more, after a filesystem is made.
    await catalogueWritten(stack);
    if (shape === 'C') {
      await stack.cloud.createFilesystem({ name: 'datasets', size: '512Gi' });
      const since = Date.now();
      const projectId = stack.sim.info.projectId;
      await addSystemJob(stack.queue, { v: 1, system: 'catalog.refresh', projectId }, 'after-fs');
      await until('the catalogue refreshed after the filesystem', async () =>
        ((await readCatalog(stack.store, projectId))?.storedAt ?? 0) >= since ? true : undefined,
      );
    }
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('opens at once from the cached catalogue, with prices, regions and provisioning estimates', async () => {
    const started = performance.now();
    const { view, ack } = await openFromCommand(stack, 'create');
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(ack).toBe('');
    const text = JSON.stringify(view.view.blocks);
    expect(text).toContain('*H100_SXM5_80GB* — $2.89 per GPU-hour');
    expect(text).toContain('ICELAND, NORWAY · ready in ~12 min');
    expect(view.view.title).toMatchObject({ text: 'Create an instance' });
    if (shape === 'C') {
      expect(text).toContain('h100-hgx-80gb.8x · 4 free · $23.12/h');
      expect(text).toContain('datasets · 512Gi');
    }
    if (shape === 'B') expect(text).toContain('Filesystem ids, one a line');
    if (shape === 'A') expect(text).not.toContain('Filesystems to attach');
    expect(stack.slack.violations).toEqual([]);
  });

  it('answers a bad name on its field and queues nothing', async () => {
    const { view } = await openFromCommand(stack, 'create');
    const since = stack.slack.mark();
    const response = await submit(stack, view, { name: 'bad name!', type_other: 'h100-hgx-80gb.1x' });
    expect(response.status).toBe(200);
    const body = response.json() as { response_action: string; errors: Record<string, string> };
    expect(body.response_action).toBe('errors');
    expect(Object.keys(body.errors)).toEqual(['name']);
    expect(body.errors.name).toMatch(/a name has 1 to 63 characters/);
    expect(await stack.requestsQueued()).toBe(0);
    expect(stack.slack.calls.slice(since).map((c) => c.method)).toEqual([]);
  });

  it('creates the instance, posting to the channel the form came from; user data reaches only the instance', async () => {
    const secret = `#cloud-config\nwrite_files:\n- path: /etc/gpuops-test\n  content: hunter2-${randomBytes(6).toString('hex')}\n`;
    const { view } = await openFromCommand(stack, 'create');
    const since = stack.slack.mark();
    const fields: Fields = {
      name: 'form-1',
      // C lists capacity, so its form offers types to pick; A and B know none yet, so one is typed.
      type: shape === 'C' ? { picked: 'h100-hgx-80gb.1x' } : 'h100-hgx-80gb.1x',
      tags: 'team=ml',
      user_data: secret,
      options: ['preemptible'],
    };
    if (shape === 'C') {
      const fs = (await stack.cloud.listFilesystems()).find((f) => f.name === 'datasets')!;
      fields.filesystems = [fs.id];
    }
    const response = await submit(stack, view, fields);
    expect(response.status).toBe(200);
    expect(response.text).toBe('');
    const message = await finalMessage(stack, since, 'Done');
    expect(message.text).toMatch(/form-1 is running at \d+\.\d+\.\d+\.\d+/);
    expect(message.history[0]!.text).toMatch(/^Queued: \/gpu create form-1 h100-hgx-80gb.1x/);

    const sent = Buffer.from(secret.trimEnd()).toString('base64');
    type SimInstance = {
      name: string;
      userData: string | null;
      preemptible: boolean;
      tags: object;
      filesystems?: string[];
    };
    const instance = (stack.sim.control.state().projects as Array<{ instances: SimInstance[] }>)
      .flatMap((p) => p.instances)
      .find((i) => i.name === 'form-1')!;
    expect(instance.userData).toBe(sent);
    expect(instance.preemptible).toBe(true);
    expect(instance.tags).toMatchObject({ team: 'ml' });
    if (shape === 'C') expect(instance.filesystems).toHaveLength(1);
    await stack.drained();
    expect(await stack.redis.keys(`${stack.storePrefix}:sealed:*`)).toEqual([]);
    await expectNowhere(stack, [secret.match(/hunter2-\w+/)![0], sent, sent.slice(-40)]);
    expect(stack.slack.violations).toEqual([]);
  });
});

describe('forms with no catalogue cached yet, shape B', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B', slack: { strictTriggerIds: true } });
    // The bot refreshes the catalogue at start; these tests run as if it had since expired.
    await catalogueWritten(stack);
    await stack.queue.removeJobScheduler(CATALOG_SCHEDULER_ID);
    await stack.redis.del(`${stack.storePrefix}:cache:catalog:${stack.sim.info.projectId}`);
    expect(await readCatalog(stack.store, stack.sim.info.projectId)).toBeUndefined();
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('opens in a loading state and fills in place (views.update with the view id and hash)', async () => {
    const { view } = await openFromCommand(stack, 'create');
    const opened = view.history[0]!;
    expect(JSON.stringify(opened.blocks)).toContain('Loading configurations, prices and instance types');
    expect(opened.submit).toBeUndefined();
    const update = await stack.slack.waitFor('views.update', (c) => c.body.view_id === view.id, 10_000);
    expect(update.response).toMatchObject({ ok: true });
    expect(typeof update.body.hash).toBe('string');
    const filled = JSON.stringify((update.body.view as { blocks: unknown[] }).blocks);
    expect(filled).toContain('per GPU-hour');
    expect(filled).toContain('"block_id":"name"');
    expect(stack.slack.views.get(view.id)!.view.submit).toMatchObject({ text: 'Create' });
    expect(await readCatalog(stack.store, stack.sim.info.projectId)).toBeDefined();
  });

  it('refreshes an open form when its button is pressed', async () => {
    const { view } = await openFromCommand(stack, 'k8s pool add prod');
    expect(JSON.stringify(view.view.blocks)).toContain(REFRESH_ACTION);
    const hash = view.hash;
    const since = stack.slack.mark();
    const response = await stack.interact(
      blockActionsPayload({ actionId: REFRESH_ACTION, view: { ...view.view, id: view.id, hash: view.hash } }),
    );
    expect(response.status).toBe(200);
    const update = await stack.slack.waitFor(
      'views.update',
      (c) => c.body.view_id === view.id,
      10_000,
      since,
    );
    expect(update.response).toMatchObject({ ok: true });
    expect(update.body.hash).toBe(hash);
    expect(JSON.stringify((update.body.view as { blocks: unknown[] }).blocks)).toContain('Number of nodes');
  });

  it('adds an SSH key from its form and records who owns it', async () => {
    const { view } = await openFromCommand(stack, 'keys add');
    const bad = await submit(stack, view, { name: 'laptop', public_key: 'ssh-ed25519 not-base64!' });
    expect((bad.json() as { errors: Record<string, string> }).errors.public_key).toMatch(
      /^That public key is not valid/,
    );
    const since = stack.slack.mark();
    const good = await submit(stack, view, { name: 'laptop', public_key: ED25519 });
    expect(good.text).toBe('');
    await finalMessage(stack, since, 'Done');
    expect((await stack.platform.listSshKeys()).map((k) => k.name)).toContain('laptop');
    expect((await stack.store.keyOwner('laptop'))?.userId).toBe('U0ADA');
  });

  it('opens a form from a button on a message, with the press trigger id', async () => {
    const triggerId = stack.slack.issueTriggerId();
    const button = openFormButton('Add a node pool…', { form: 'slurm.pool.add', cluster: 'hpc' });
    const response = await stack.interact(
      blockActionsPayload({
        actionId: OPEN_FORM_ACTION,
        value: button.value!,
        triggerId,
        message: { ts: '1.1' },
      }),
    );
    expect(response.status).toBe(200);
    const call = await stack.slack.waitFor('views.open', (c) => c.body.trigger_id === triggerId, 3_000);
    expect(call.response).toMatchObject({ ok: true });
    expect(JSON.stringify(call.body.view)).toContain('Slurm cluster *hpc*');
  });
});

describe('registering a Kubernetes cluster from its form, shape A', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'A', captureLogs: true, slack: { strictTriggerIds: true } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('registers the cluster; the kubeconfig reaches the cloud and nowhere else', async () => {
    const token = `kc-token-${randomBytes(8).toString('hex')}`;
    const kubeconfig = [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: on-prem',
      '  cluster:',
      '    server: https://10.0.0.1:6443',
      'users:',
      '- name: admin',
      '  user:',
      `    token: ${token}`,
    ].join('\n');
    const { view } = await openFromCommand(stack, 'k8s register');
    const since = stack.slack.mark();
    const response = await submit(stack, view, {
      name: 'on-prem',
      kubeconfig,
      labels: 'service.io/metrics-enabled=true',
    });
    expect(response.text).toBe('');
    const message = await finalMessage(stack, since, 'Done');
    expect(message.text).toContain('Kubernetes cluster on-prem is registered');
    const cluster = (await stack.cloud.listK8sClusters()).find((c) => c.name === 'on-prem');
    expect(cluster?.labels).toMatchObject({ 'service.io/metrics-enabled': 'true' });
    await stack.drained();
    expect(await stack.redis.keys(`${stack.storePrefix}:sealed:*`)).toEqual([]);
    await expectNowhere(stack, [token, Buffer.from(kubeconfig).toString('base64').slice(-40)]);
  });

  it('adds you to a Slurm cluster from the form that --form opens, prefilled and listing your keys', async () => {
    await stack.store.addKeyOwner({
      name: 'laptop',
      userId: 'U0ADA',
      publicKey: ED25519,
      addedAt: Date.now(),
    });
    const { view } = await openFromCommand(stack, 'slurm adduser slurm-1 --form --username ada --sudo');
    const text = JSON.stringify(view.view.blocks);
    expect(text).toContain('Slurm cluster *slurm-1*');
    expect(text).toContain('You join with your SSH keys: `laptop`');
    expect(text).toContain('"initial_value":"ada"');
    const bad = await submit(stack, view, { username: 'Not Valid' });
    expect((bad.json() as { errors: Record<string, string> }).errors.username).toMatch(/lowercase letter/);
    expect(await stack.requestsQueued()).toBe(0);
    const since = stack.slack.mark();
    const good = await submit(stack, view, { username: 'ada', sudo: ['sudo'] });
    expect(good.text).toBe('');
    const message = await finalMessage(stack, since, 'Done');
    expect(message.history[0]!.text).toMatch(/^Queued: \/gpu slurm adduser slurm-1/);
    const cluster = (await stack.cloud.listSlurmClusters()).find((c) => c.name === 'slurm-1')!;
    const users = await stack.cloud.listSlurmUsers({ clusterId: cluster.id });
    expect(users.find((u) => u.username === 'ada')).toMatchObject({ sudo: true, sshKeys: [ED25519] });
  });
});
