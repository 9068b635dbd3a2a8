import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BotStack } from '../support/bot-stack.js';
import { startBotStack } from '../support/bot-stack.js';
import { answeredPrivately } from '../support/slash-requests.js';
import { CHANNEL, expectCleanSlack, listenerAnswer, privateAnswer } from './answers.js';

// /gpu k8s kubeconfig: the kubeconfig reaches the requester alone, as a file in a DM, and nowhere else:
// not a channel, not the job's data or return value in Redis, not a log line.

const ADA = { id: 'U0ADA', name: 'ada' };

/** Every value under the stack's Redis keys (queue and store), as one string to search. */
async function redisDump(stack: BotStack): Promise<{ keys: string[]; text: string }> {
  const { redis } = stack;
  const keys: string[] = [];
  // The stack's Redis is its own: every key in it is the bot's.
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'COUNT', '500');
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  const parts: string[] = [];
  for (const key of keys) {
    const type = await redis.type(key);
    if (type === 'string') parts.push(String(await redis.get(key)));
    else if (type === 'hash') parts.push(JSON.stringify(await redis.hgetall(key)));
    else if (type === 'list') parts.push(JSON.stringify(await redis.lrange(key, 0, -1)));
    else if (type === 'set') parts.push(JSON.stringify(await redis.smembers(key)));
    else if (type === 'zset') parts.push(JSON.stringify(await redis.zrange(key, '0', '-1')));
    else if (type === 'stream') parts.push(JSON.stringify(await redis.xrange(key, '-', '+')));
  }
  return { keys, text: parts.join('\n') };
}

describe.each(['A', 'B'] as const)('/gpu k8s kubeconfig, shape %s', (shape) => {
  let stack: BotStack;
  let clusterId: string;
  let kubeconfig: string;
  let secrets: string[];

  beforeAll(async () => {
    stack = await startBotStack({ shape, captureLogs: true, slack: { users: [ADA] } });
    const cluster = await stack.cloud.createK8sCluster({ name: 'prod', version: 'v1.31.2' });
    clusterId = cluster.id;
    kubeconfig = await stack.cloud.getKubeconfig({ clusterId });
    // The distinctive parts: the admin token and the CA data of the simulated cluster.
    secrets = [/token: (\S+)/, /certificate-authority-data: (\S+)/].map((re) => re.exec(kubeconfig)![1]!);
    expect(secrets.every((s) => s.length >= 20)).toBe(true);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('sends the kubeconfig as a file in a DM to the requester, and tells them privately', async () => {
    const since = stack.slack.mark();
    const { answer: ack } = await stack.command('k8s kubeconfig prod');
    expect(await ack()).toMatchObject({
      response_type: 'ephemeral',
      text: ':envelope: I will send it to you in a direct message.',
    });
    await stack.responses.waitForPost((p) => String(p.body.text).includes('kubeconfig'), 15_000);
    const answer = stack.responses.posts.at(-1)!;
    expect(answer.responseType).toBe('ephemeral');
    expect(answer.replaceOriginal).toBe(true);
    expect(String(answer.body.text)).toContain(
      'Sent you the kubeconfig of prod in a direct message, as the file kubeconfig-prod.yaml.',
    );

    const dm = stack.slack.dmChannelFor('U0ADA');
    const open = await stack.slack.waitFor('conversations.open', () => true, 1_000, since);
    expect(open.body.users).toBe('U0ADA');
    const files = [...stack.slack.files.values()];
    expect(files).toHaveLength(1);
    const file = files[0]!;
    expect(file).toMatchObject({ filename: 'kubeconfig-prod.yaml', channel: dm, completed: true });
    expect(file.bytes?.toString('utf8')).toBe(kubeconfig);
    expect(file.initialComment).toContain('keep it to yourself');
    expect(stack.slack.messages(dm)).toHaveLength(1);
    expectCleanSlack(stack);
  });

  it('never shows it in a channel, in Redis or in a log line', async () => {
    await stack.drained();
    // Slack: every recorded Web API call, every message of every channel but the file's bytes in the DM.
    for (const call of stack.slack.calls) {
      for (const s of secrets) expect(JSON.stringify(call.body), call.method).not.toContain(s);
    }
    expect(stack.slack.callsTo('chat.postMessage').filter((c) => c.body.channel === CHANNEL)).toEqual([]);
    expect(stack.slack.callsTo('chat.update')).toEqual([]);
    expect(stack.slack.messages(CHANNEL)).toEqual([]);
    const holders = [...stack.slack.files.values()].filter((f) =>
      secrets.some((s) => f.bytes?.toString('utf8').includes(s)),
    );
    expect(holders.map((f) => f.channel)).toEqual([stack.slack.dmChannelFor('U0ADA')]);
    for (const post of stack.responses.posts) {
      for (const s of secrets) expect(JSON.stringify(post.body)).not.toContain(s);
    }

    // Redis: the job's data, progress and return value, the job log, everything under the stack's keys.
    const job = (await stack.queue.getJobs(['completed'])).find((j) => j && 'command' in j.data);
    expect(job?.data.command).toEqual({ kind: 'k8s.kubeconfig', cluster: 'prod' });
    expect(String(job?.returnvalue)).toContain('kubeconfig-prod.yaml');
    const dump = await redisDump(stack);
    expect(dump.text).toContain('k8s.kubeconfig');
    for (const s of secrets) {
      expect(JSON.stringify(job?.data)).not.toContain(s);
      expect(String(job?.returnvalue)).not.toContain(s);
      expect(dump.text).not.toContain(s);
    }

    // Logs, at debug level.
    expect(stack.logLines.some((l) => l.includes('job done'))).toBe(true);
    for (const s of secrets) expect(stack.logLines.join('\n')).not.toContain(s);
  });

  it('takes the cluster id as well as its name', async () => {
    const answer = await privateAnswer(stack, `k8s kubeconfig ${clusterId}`);
    expect(answer.text).toContain('Sent you the kubeconfig of prod in a direct message');
    expect([...stack.slack.files.values()].filter((f) => f.filename === 'kubeconfig-prod.yaml')).toHaveLength(
      2,
    );
  });

  it('says privately which clusters there are when the name is unknown, and sends nothing', async () => {
    const before = stack.slack.files.size;
    // Checked before anything is queued: the listener answers at once, privately.
    const answer = await answeredPrivately(stack, 'k8s kubeconfig nope');
    expect(answer).toContain('No Kubernetes cluster "nope" in this project.');
    expect(answer).toContain('prod');
    expect(stack.slack.files.size).toBe(before);
    expect(stack.slack.messages(CHANNEL)).toEqual([]);
    expectCleanSlack(stack);
  });
});

describe('/gpu k8s kubeconfig in shape C', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'C' });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('says it is not available, and queues nothing', async () => {
    expect(await listenerAnswer(stack, 'k8s kubeconfig prod')).toContain(
      "`/gpu k8s kubeconfig` does not work with this cloud: its API cannot look up kubeconfigs. Use the cloud's own console or CLI for it; `/gpu help` lists what works here.",
    );
    expect(await stack.requestsQueued()).toBe(0);
  });
});
