import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePolicy } from '../../src/policy/load-policy.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { createFormSubmission, primeCatalog, requestJobsInQueue, until } from './guardrails-kit.js';

// Who may do what, end to end: each role against each operation class, the role coming from the
// person, from a Slack user group (usergroups.users.list on the fake) or from the channel.

const POLICY = parsePolicy(`
default_role: viewer
roles:
  admin: { users: [U0ADMIN] }
  operator:
    users: [U0OPUSER]
    groups: [S0OPS]
    channels: [C0OPSROOM]
approvals:
  approvers: { users: [U0ADMIN] }
`);

interface Principal {
  readonly label: string;
  readonly userId: string;
  readonly channelId: string;
  readonly role: 'viewer' | 'operator' | 'admin';
}

const PRINCIPALS: readonly Principal[] = [
  { label: 'a viewer (the default)', userId: 'U0VIEW', channelId: 'C0GPU', role: 'viewer' },
  { label: 'an operator by name', userId: 'U0OPUSER', channelId: 'C0GPU', role: 'operator' },
  { label: 'an operator through @ops', userId: 'U0GROUPIE', channelId: 'C0GPU', role: 'operator' },
  { label: 'anyone in the operators’ channel', userId: 'U0VIEW', channelId: 'C0OPSROOM', role: 'operator' },
  { label: 'an admin', userId: 'U0ADMIN', channelId: 'C0GPU', role: 'admin' },
];

type Class = 'read' | 'operate' | 'create' | 'destroy' | 'admin';
const RANK = { viewer: 0, operator: 1, admin: 2 } as const;
const NEEDS: Record<Class, keyof typeof RANK> = {
  read: 'viewer',
  operate: 'operator',
  create: 'operator',
  destroy: 'operator',
  admin: 'admin',
};

/** Representative kinds of each class; `n` keeps requests of different principals apart. */
const COMMANDS: ReadonlyArray<{ cls: Class; text: (n: number) => string }> = [
  { cls: 'read', text: () => 'ls' },
  { cls: 'read', text: (n) => `show ghost-${n}` },
  { cls: 'operate', text: (n) => `stop ghost-${n}` },
  { cls: 'operate', text: (n) => `keys rm nokey-${n}` },
  { cls: 'create', text: (n) => `create cheap-${n} rtx-a5000-24gb.1x` },
  { cls: 'create', text: (n) => `k8s create kube-${n} 1.31` },
  { cls: 'destroy', text: (n) => `rm victim-${n}` },
  { cls: 'destroy', text: (n) => `k8s rm doomed-${n}` },
  { cls: 'admin', text: () => 'audit 5' },
  { cls: 'admin', text: (n) => `slurm sudo slurm-1 alice${n} on` },
];

/** The listener's ephemeral answer; empty when the channel message is the whole answer. */
function ackText(raw: string): string {
  return raw ? String((JSON.parse(raw) as { text?: string }).text ?? '') : '';
}

describe('the role matrix end to end, shape A', () => {
  let stack: BotStack;
  beforeAll(async () => {
    // Shape A has every kind used here, Slurm sudo included.
    stack = await startBotStack({
      shape: 'A',
      policy: POLICY,
      slack: { usergroups: { S0OPS: ['U0GROUPIE', 'U0SOMEONE'] } },
    });
    // Real machines to ask to delete: a typo would be answered before any approver saw it.
    // The same for clusters; Slurm sudo goes to the seeded cluster slurm-1.
    for (let n = 0; n < PRINCIPALS.length; n++) {
      await stack.cloud.createInstance({ name: `victim-${n}`, type: 'rtx-a5000-24gb.1x' });
      await stack.cloud.createK8sCluster({ name: `doomed-${n}`, version: 'v1.31' });
    }
    await primeCatalog(stack);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it.each(PRINCIPALS.map((p, n) => ({ ...p, n })))('$label gets what the $role role allows', async (p) => {
    for (const command of COMMANDS) {
      const text = command.text(p.n);
      const { response } = await stack.command(text, { userId: p.userId, channelId: p.channelId });
      expect(response.status).toBe(200);
      const answer = ackText(response.text);
      expect(answer, `/gpu ${text}`).not.toContain('is not available');
      const allowed = RANK[p.role] >= RANK[NEEDS[command.cls]];
      if (allowed) {
        expect(answer, `${p.label}: /gpu ${text}`).not.toMatch(/needs the \*\w+\* role/);
      } else {
        expect(answer, `${p.label}: /gpu ${text}`).toMatch(
          new RegExp(`needs the \\*${NEEDS[command.cls]}\\* role, and you have \\*${p.role}\\*`),
        );
      }
      // Destructive and sudo requests that pass the role check still wait for an approver.
      if (allowed && (command.cls === 'destroy' || text.startsWith('slurm sudo'))) {
        expect(answer, `/gpu ${text}`).toContain('needs an approval');
      }
    }
  });

  it('refuses a destructive command from a viewer, naming the role it needs and who can grant it', async () => {
    const since = stack.slack.mark();
    const body = await (await stack.command('rm train-1', { userId: 'U0VIEW' })).answer();
    expect(body.response_type).toBe('ephemeral');
    expect(body.text).toBe(
      '`/gpu rm` needs the *operator* role, and you have *viewer* (the default for everyone). To get it, ask an admin (<@U0ADMIN>) to grant operator to you, to a user group you are in, or to this channel in the gpuops policy file.',
    );
    // Posts of earlier requests may still land after their acknowledgement: none is about this one.
    const posts = stack.slack.calls.slice(since).filter((c) => c.method === 'chat.postMessage');
    expect(posts.filter((c) => String(c.body.text).includes('rm train-1'))).toEqual([]);
    const refused = (await stack.guardrails!.audit.latest(5)).find(
      (e) => e.operation === 'rm' && e.actor === 'U0VIEW' && e.target === 'train-1',
    );
    expect(refused).toMatchObject({ event: 'request', outcome: 'refused' });
  });

  it('does not open a form for someone who may not submit it', async () => {
    const since = stack.slack.mark();
    const { answer } = await stack.command('create', {
      userId: 'U0VIEW',
      triggerId: stack.slack.issueTriggerId(),
    });
    expect((await answer()).text).toContain('needs the *operator* role');
    expect(stack.slack.calls.slice(since).filter((c) => c.method === 'views.open')).toEqual([]);
  });

  it('answers a submitted form from a viewer on the form itself, in plain words, and queues nothing', async () => {
    const before = (await requestJobsInQueue(stack)).length;
    const response = await stack.interact(
      createFormSubmission('U0VIEW', { v: 1, form: 'create', channelId: 'C0GPU' }, 'sneaky-1'),
    );
    const body = response.json() as { response_action: string; errors: Record<string, string> };
    expect(body.response_action).toBe('errors');
    expect(Object.values(body.errors).join(' ')).toBe(
      '/gpu create needs the operator role, and you have viewer. Ask an admin to grant operator to you, to a user group you are in, or to this channel in the gpuops policy file.',
    );
    expect((await requestJobsInQueue(stack)).length).toBeLessThanOrEqual(before);
  });

  it('reads group membership from Slack only for the groups the policy names, and caches it', async () => {
    const lists = stack.slack.callsTo('usergroups.users.list');
    expect(lists.length).toBeGreaterThan(0);
    expect(new Set(lists.map((c) => c.body.usergroup))).toEqual(new Set(['S0OPS']));
    const before = lists.length;
    await stack.command('ls', { userId: 'U0GROUPIE' });
    await stack.command('stop ghost-9', { userId: 'U0GROUPIE' });
    expect(stack.slack.callsTo('usergroups.users.list')).toHaveLength(before);
  });

  it('counts a member removed from the group once the cache lapses (a minute), not before', async () => {
    stack.slack.setUsergroup('S0OPS', ['U0SOMEONE']);
    // The cached membership still says yes; a fresh look (cache dropped, as after a minute) says no.
    const still = ackText((await stack.command('stop ghost-10', { userId: 'U0GROUPIE' })).response.text);
    expect(still).not.toMatch(/needs the/);
    await stack.redis.del(`${stack.storePrefix}:cache:usergroup:S0OPS`);
    const now = ackText((await stack.command('stop ghost-11', { userId: 'U0GROUPIE' })).response.text);
    expect(now).toMatch(/needs the \*operator\* role, and you have \*viewer\*/);
  });

  it('keeps Slack calls within limits', async () => {
    await until(async () => (await requestJobsInQueue(stack)).length === 0, 'the queued jobs to end', 30_000);
    expect(stack.slack.violations).toEqual([]);
  });
});
