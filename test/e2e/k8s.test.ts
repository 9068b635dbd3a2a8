import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubernetesCluster } from '../../src/cloud/index.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { answeredPrivately, privateAnswer, refused, settled, shown } from '../support/slash-requests.js';

// `/gpu k8s …` end to end in every shape that has each subcommand: what the requester sees in Slack,
// and what the simulator then holds.

const POOL_TYPE = 'l40s-48gb.2x';

async function clusterNamed(stack: BotStack, name: string): Promise<KubernetesCluster | undefined> {
  return (await stack.cloud.listK8sClusters()).find((c) => c.name === name);
}

describe.each(['A', 'B', 'C'] as const)('Kubernetes end to end, shape %s', (shape) => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('creates a cluster once and reports it ready', async () => {
    const message = await settled(stack, 'k8s create prod v1.31', 'Done');
    expect(message.text).toContain('Kubernetes cluster prod is ready (v1.31).');
    const phases = message.history.map((v) => String(v.text).split(':')[0]);
    expect(phases[0]).toBe('Queued');
    expect(phases).toContain('Working');
    // Only A reports a status to wait on; B and C are ready once the cluster can be read.
    if (shape === 'A') expect(phases).toContain('Waiting');
    const cluster = await clusterNamed(stack, 'prod');
    expect(cluster?.version).toBe('v1.31');
    if (shape === 'A') expect(cluster?.status?.type).toBe('READY');
    expect(stack.sim.control.createCount('createK8sCluster', 'prod')).toBe(1);
    expect(stack.slack.violations).toEqual([]);
  });

  it('refuses a second cluster of the same name without sending a create', async () => {
    const message = await settled(stack, 'k8s create prod v1.32', 'Failed', { userId: 'U0BOB' });
    expect(message.text).toContain(
      'A Kubernetes cluster named prod already exists in this project (v1.31); pick another name',
    );
    expect(stack.sim.control.createCount('createK8sCluster', 'prod')).toBe(1);
    expect((await stack.cloud.listK8sClusters()).filter((c) => c.name === 'prod')).toHaveLength(1);
  });

  it('resumes a create whose first attempt sent the request, adopting the cluster it made', async () => {
    // As if a worker died right after the cloud accepted the create: the cluster exists and the job's
    // progress says the create was sent, but not which cluster came of it.
    await stack.cloud.createK8sCluster({ name: 'retried', version: 'v1.31' });
    const command = { kind: 'k8s.create', modal: false, name: 'retried', version: 'v1.31' } as const;
    await stack.queue.add(
      command.kind,
      {
        v: 1,
        command,
        ctx: { teamId: 'T0FAKE', channelId: 'C0GPU', userId: 'U0ADA', requestedAt: Date.now() },
        progress: { sent: true },
      },
      { jobId: `retried-${shape}` },
    );
    const done = await stack.slack.waitFor('chat.update', (c) =>
      String(c.body.text).startsWith('Done: /gpu k8s create retried'),
    );
    expect(String(done.body.text)).toContain('Kubernetes cluster retried is ready');
    expect(stack.sim.control.createCount('createK8sCluster', 'retried')).toBe(1);
    await settled(stack, 'k8s rm retried', 'Done');
  });

  it('lists clusters privately', async () => {
    const post = await privateAnswer(stack, 'k8s ls');
    expect(shown(post)).toContain('*prod* · v1.31');
    if (shape === 'A') expect(shown(post)).toContain('READY');
  });

  it('tells only the requester when a cluster does not exist, with the nearest name; the channel sees nothing', async () => {
    expect(await answeredPrivately(stack, 'k8s show prdo')).toBe(
      'No Kubernetes cluster "prdo" in this project. Did you mean `prod`? (`/gpu k8s ls` lists them.)',
    );
    // A change that would have posted "Queued" and then "Failed" in the channel.
    const change = shape === 'A' ? 'k8s label prdo team=ml' : 'k8s pool add prdo gpu-b l40s-48gb.2x 1';
    expect(await answeredPrivately(stack, change, { userId: 'U0BOB' })).toContain(
      'No Kubernetes cluster "prdo" in this project. Did you mean `prod`?',
    );
    expect(await answeredPrivately(stack, 'k8s rm staging')).toBe(
      'No Kubernetes cluster "staging" in this project. This project has: prod. Check the name with `/gpu k8s ls`.',
    );
  });

  if (shape === 'A') {
    it('upgrades a cluster and waits for it to be ready at the new version', async () => {
      const message = await settled(stack, 'k8s upgrade prod 1.32', 'Done');
      expect(message.text).toContain('prod is now at v1.32 (was v1.31).');
      expect((await clusterNamed(stack, 'prod'))?.version).toBe('v1.32');
    });

    it('merges labels into the ones a cluster has', async () => {
      await settled(stack, 'k8s label prod team=ml', 'Done');
      const message = await settled(stack, 'k8s label prod service.io/metrics-enabled=true', 'Done');
      expect(message.text).toContain('Set 1 label on prod (service.io/metrics-enabled); it has 2 in all.');
      expect(JSON.stringify(message.blocks)).toContain('`team=ml`');
      expect((await clusterNamed(stack, 'prod'))?.labels).toEqual({
        team: 'ml',
        'service.io/metrics-enabled': 'true',
      });
    });

    it('says node pools cannot be added or removed in this shape, and queues nothing', async () => {
      expect(await refused(stack, `k8s pool add prod gpu-a ${POOL_TYPE} 2`)).toContain(
        "`/gpu k8s pool add` does not work with this cloud: its API cannot create Kubernetes node pools. Use the cloud's own console or CLI for it; `/gpu help` lists what works here.",
      );
      expect(await refused(stack, 'k8s pool rm prod gpu-a')).toContain('does not work with this cloud');
    });
  } else {
    it('says upgrades and labels are not available in this shape', async () => {
      expect(await refused(stack, 'k8s upgrade prod v1.32')).toContain(
        `\`/gpu k8s upgrade\` does not work with this cloud`,
      );
      expect(await refused(stack, 'k8s label prod team=ml')).toContain('does not work with this cloud');
    });

    it('refuses a node pool of a type the cloud does not sell before anything is posted, as create does', async () => {
      const answer = await answeredPrivately(stack, 'k8s pool add prod gpu-x h100-typo 2', {
        userId: 'U0BOB',
      });
      expect(answer).toMatch(/^"h100-typo" is not an instance type this cloud offers\./);
      expect(stack.sim.control.createCount('createK8sNodePool', 'gpu-x')).toBe(0);
    });

    it('adds a node pool once and waits for its nodes', async () => {
      const message = await settled(stack, `k8s pool add prod gpu-a ${POOL_TYPE} 2`, 'Done');
      expect(message.text).toContain(`Node pool gpu-a of prod is ready: 2 × ${POOL_TYPE}, `);
      // B lists nodes and the job waits for them; C lists none.
      expect(message.text).toContain(
        shape === 'B' ? '2/2 nodes ready.' : 'this cloud does not report its nodes.',
      );
      const cluster = await clusterNamed(stack, 'prod');
      const pools = await stack.cloud.listK8sNodePools({ clusterId: cluster!.id });
      expect(pools.map((p) => [p.name, p.type, p.count])).toEqual([['gpu-a', POOL_TYPE, 2]]);
      expect(stack.sim.control.createCount('createK8sNodePool', 'gpu-a')).toBe(1);
    });

    it('refuses a second pool of the same name in the cluster', async () => {
      const message = await settled(stack, `k8s pool add prod gpu-a ${POOL_TYPE} 1`, 'Failed');
      expect(message.text).toContain(`Cluster prod already has a node pool named gpu-a (2 × ${POOL_TYPE})`);
      expect(stack.sim.control.createCount('createK8sNodePool', 'gpu-a')).toBe(1);
    });

    it('shows the cluster with its pools and node readiness', async () => {
      const post = await privateAnswer(stack, 'k8s show prod');
      const text = shown(post);
      expect(text).toContain(`*gpu-a* · 2 × ${POOL_TYPE}`);
      if (shape === 'B') expect(text).toContain('2/2 ready');
      const pools = await privateAnswer(stack, 'k8s pools prod');
      expect(shown(pools)).toContain('Node pools of prod (1)');
      expect(shown(pools)).toContain('*gpu-a*');
    });

    it('names the pools there are when one to remove is unknown', async () => {
      const message = await settled(stack, 'k8s pool rm prod gpu-z', 'Failed');
      expect(message.text).toContain('Cluster prod has no node pool "gpu-z". Its pools: gpu-a.');
    });

    it('removes a node pool and waits until it is gone', async () => {
      const message = await settled(stack, 'k8s pool rm prod gpu-a', 'Done');
      expect(message.text).toContain('Node pool gpu-a of prod is deleted.');
      const cluster = await clusterNamed(stack, 'prod');
      expect(await stack.cloud.listK8sNodePools({ clusterId: cluster!.id })).toEqual([]);
    });
  }

  it('deletes the cluster and waits until it is gone', async () => {
    const message = await settled(stack, 'k8s rm prod', 'Done');
    expect(message.text).toContain('Kubernetes cluster prod is deleted.');
    expect(await clusterNamed(stack, 'prod')).toBeUndefined();
    expect(stack.slack.violations).toEqual([]);
  });
});
