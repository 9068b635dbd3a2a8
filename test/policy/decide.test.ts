import { describe, expect, it } from 'vitest';
import {
  GPU_COMMAND_KINDS,
  type GpuCommandKind,
  type OperationClass,
  operationClassOf,
} from '../../src/commands/registry.js';
import {
  approvableBy,
  approvalChannelFor,
  authorize,
  describeApprovers,
  groupsInPolicy,
  leaseFor,
  mayApprove,
  mention,
  needsApproval,
  roleOf,
} from '../../src/policy/decide.js';
import { parsePolicy } from '../../src/policy/load-policy.js';
import { DEFAULT_POLICY } from '../../src/policy/policy.js';
import type { PolicyRole } from '../../src/policy/policy-schema.js';
import type { KnownCost } from '../../src/pricing/cost.js';

// Who may run what, written out by hand so a change to the defaults shows up here.
const ALLOWED: Record<PolicyRole, readonly OperationClass[]> = {
  viewer: ['read'],
  operator: ['read', 'operate', 'create', 'destroy'],
  admin: ['read', 'operate', 'create', 'destroy', 'admin'],
};
const NEEDED: Record<OperationClass, PolicyRole> = {
  read: 'viewer',
  operate: 'operator',
  create: 'operator',
  destroy: 'operator',
  admin: 'admin',
};

const policy = parsePolicy(
  `
default_role: viewer
roles:
  admin: { users: [UADMIN01], groups: [SADMINS01], channels: [CADMINS01] }
  operator: { users: [UOPER0001], groups: [SOPERS001], channels: [COPERS001] }
  viewer: { users: [UVIEW0001], groups: [SVIEWERS1], channels: [CVIEWERS1] }
`,
  'matrix.yaml',
);

const GRANTS: Record<PolicyRole, { user: string; group: string; channel: string }> = {
  admin: { user: 'UADMIN01', group: 'SADMINS01', channel: 'CADMINS01' },
  operator: { user: 'UOPER0001', group: 'SOPERS001', channel: 'COPERS001' },
  viewer: { user: 'UVIEW0001', group: 'SVIEWERS1', channel: 'CVIEWERS1' },
};

type Via = 'user' | 'group' | 'channel';
function asks(role: PolicyRole, via: Via) {
  const g = GRANTS[role];
  return {
    policy,
    userId: via === 'user' ? g.user : 'UNOBODY01',
    userGroups: via === 'group' ? [g.group] : ['SUNRELATED'],
    channelId: via === 'channel' ? g.channel : 'CELSEWHERE',
  };
}

describe('the role matrix', () => {
  const cases = (['viewer', 'operator', 'admin'] as const).flatMap((role) =>
    (['user', 'group', 'channel'] as const).map((via) => ({ role, via })),
  );

  it.each(cases)('$role granted via $via may run exactly the classes of its rank', ({ role, via }) => {
    for (const kind of GPU_COMMAND_KINDS) {
      const cls = operationClassOf(kind);
      const result = authorize({ ...asks(role, via), kind });
      expect(result.role, kind).toBe(role);
      expect(result.allowed, `${role} via ${via}: ${kind} (${cls})`).toBe(ALLOWED[role].includes(cls));
      if (!result.allowed) {
        expect(result.needed).toBe(NEEDED[cls]);
        expect(result.message).toContain(`*${NEEDED[cls]}* role`);
      }
    }
  });

  it('covers every operation class with a kind the brief names', () => {
    const expected: Record<string, OperationClass> = {
      ls: 'read',
      'slurm.users': 'read',
      metrics: 'read',
      start: 'operate',
      'keys.add': 'operate',
      'k8s.kubeconfig': 'operate',
      waitlist: 'operate',
      create: 'create',
      'k8s.upgrade': 'create',
      'slurm.pool.add': 'create',
      rm: 'destroy',
      'k8s.pool.rm': 'destroy',
      'fs.rm': 'destroy',
      audit: 'admin',
      'slurm.sudo': 'admin',
    };
    for (const [kind, cls] of Object.entries(expected)) {
      expect(operationClassOf(kind as GpuCommandKind), kind).toBe(cls);
    }
  });

  it('gives the highest of direct, group and channel grants', () => {
    const who = { policy, userId: 'UVIEW0001', userGroups: ['SOPERS001'], channelId: 'CVIEWERS1' };
    expect(roleOf(who)).toEqual({ role: 'operator', via: 'granted to <!subteam^SOPERS001>' });
    expect(roleOf({ ...who, channelId: 'CADMINS01' })).toEqual({
      role: 'admin',
      via: 'granted to <#CADMINS01>',
    });
    expect(roleOf({ ...who, userId: 'UADMIN01', channelId: 'CVIEWERS1' }).role).toBe('admin');
    // Someone granted nothing, in a channel granted nothing, has the default role.
    expect(roleOf({ policy, userId: 'UNOBODY01', userGroups: [], channelId: 'CELSEWHERE' })).toEqual({
      role: 'viewer',
      via: 'the default for everyone',
    });
  });

  it('refuses a destructive command from a viewer with the role it needs and how to get it', () => {
    const result = authorize({ ...asks('viewer', 'user'), kind: 'rm' });
    expect(result).toMatchObject({ allowed: false, role: 'viewer', needed: 'operator' });
    if (result.allowed) throw new Error('unreachable');
    expect(result.message).toBe(
      '`/gpu rm` needs the *operator* role, and you have *viewer* (granted to you). To get it, ask an admin ' +
        '(<@UADMIN01>, <!subteam^SADMINS01>, <#CADMINS01>) to grant operator to you, to a user group you are ' +
        'in, or to this channel in the gpuops policy file.',
    );
  });

  it('applies a per-kind override over the class', () => {
    const strict = parsePolicy('permissions:\n  kinds:\n    k8s.kubeconfig: admin\n    audit: operator\n');
    const operator = { policy: strict, userId: 'UANYONE01', userGroups: [] };
    expect(authorize({ ...operator, kind: 'k8s.kubeconfig' })).toMatchObject({
      allowed: false,
      needed: 'admin',
    });
    expect(authorize({ ...operator, kind: 'audit' })).toEqual({ allowed: true, role: 'operator' });
    expect(authorize({ ...operator, kind: 'k8s.pool.add' }).allowed).toBe(true);
  });

  it('with no policy file lets everyone read, operate, create and destroy, but not administer', () => {
    const anyone = { policy: DEFAULT_POLICY, userId: 'UANYONE01', userGroups: [], channelId: 'CANY00001' };
    for (const kind of ['ls', 'start', 'create', 'k8s.pool.add', 'rm'] as const) {
      expect(authorize({ ...anyone, kind }).allowed, kind).toBe(true);
    }
    const audit = authorize({ ...anyone, kind: 'audit' });
    expect(audit).toMatchObject({ allowed: false, role: 'operator', needed: 'admin' });
    if (!audit.allowed) expect(audit.message).toContain('ask whoever runs gpuops');
  });
});

describe('needsApproval', () => {
  it('always asks for the destructive kinds and slurm sudo by default, whatever they cost', () => {
    for (const kind of [
      'rm',
      'fs.rm',
      'k8s.rm',
      'k8s.pool.rm',
      'slurm.rm',
      'slurm.pool.rm',
      'slurm.sudo',
    ] as const) {
      const need = needsApproval({ policy: DEFAULT_POLICY, kind });
      expect(need.required, kind).toBe(true);
      expect(need.reasons[0]).toContain('always needs an approval');
    }
    expect(needsApproval({ policy: DEFAULT_POLICY, kind: 'start' })).toEqual({
      required: false,
      reasons: [],
    });
  });

  it('asks when what it adds per hour is above the threshold (10 USD/h by default), not at it', () => {
    expect(needsApproval({ policy: DEFAULT_POLICY, kind: 'create', costPerHour: 23.12 })).toEqual({
      required: true,
      reasons: ['It costs about $23.12/h, above the $10.00/h that needs no approval.'],
    });
    expect(needsApproval({ policy: DEFAULT_POLICY, kind: 'create', costPerHour: 10 }).required).toBe(false);
    expect(needsApproval({ policy: DEFAULT_POLICY, kind: 'create', costPerHour: 2.89 }).required).toBe(false);
  });

  it('reads a known estimate as its price per hour', () => {
    expect(needsApproval({ policy: DEFAULT_POLICY, kind: 'create', costPerHour: knownCost(23.12) })).toEqual({
      required: true,
      reasons: ['It costs about $23.12/h, above the $10.00/h that needs no approval.'],
    });
    expect(needsApproval({ policy: DEFAULT_POLICY, kind: 'create', costPerHour: knownCost(2.89) })).toEqual({
      required: false,
      reasons: [],
    });
    const allow = parsePolicy('approvals:\n  unknown_price: allow\n');
    expect(needsApproval({ policy: allow, kind: 'create', costPerHour: knownCost(23.12) }).required).toBe(
      true,
    );
  });

  it('asks when the price is unknown, and says why', () => {
    const need = needsApproval({
      policy: DEFAULT_POLICY,
      kind: 'create',
      costPerHour: { known: false, reason: 'no configuration of the platform prices CPU' },
    });
    expect(need.required).toBe(true);
    expect(need.reasons).toEqual([
      'Its price is unknown (no configuration of the platform prices CPU), so it cannot be shown to stay within $10.00/h.',
    ]);
  });

  it('lets an unpriced operation through when the policy says unknown_price: allow, known costs still count', () => {
    const p = parsePolicy('approvals:\n  unknown_price: allow\n');
    const unknown = { known: false as const, reason: 'prices could not be loaded from the platform API' };
    expect(needsApproval({ policy: p, kind: 'create', costPerHour: unknown })).toEqual({
      required: false,
      reasons: [],
    });
    expect(needsApproval({ policy: p, kind: 'create', costPerHour: 23.12 }).required).toBe(true);
    expect(needsApproval({ policy: p, kind: 'rm' }).required).toBe(true);
    expect(() => parsePolicy('approvals:\n  unknown_price: maybe\n')).toThrow(
      /unknown_price is ask \(wait for an approver\) or allow/,
    );
  });

  it('gives every reason when several apply', () => {
    const p = parsePolicy('approvals:\n  threshold_per_hour: 1\n  always: [create]\n');
    expect(needsApproval({ policy: p, kind: 'create', costPerHour: 2.89 }).reasons).toHaveLength(2);
    expect(needsApproval({ policy: p, kind: 'rm' }).required).toBe(false);
  });
});

describe('mayApprove', () => {
  const withApprovers = parsePolicy(`
roles:
  admin: { users: [UADMIN01] }
approvals:
  approvers: { users: [ULEAD0001], groups: [SLEADS001] }
`);

  it('refuses the requester unless self-approval is allowed', () => {
    const self = {
      approverId: 'ULEAD0001',
      approverGroups: [],
      requesterId: 'ULEAD0001',
      kind: 'rm',
    } as const;
    const refused = mayApprove({ policy: withApprovers, ...self });
    expect(refused).toEqual({
      allowed: false,
      message: 'You asked for this yourself, so someone else has to approve it.',
    });
    const lenient = parsePolicy(
      'approvals:\n  allow_self_approval: true\n  approvers: { users: [ULEAD0001] }\n',
    );
    expect(mayApprove({ policy: lenient, ...self })).toEqual({ allowed: true, as: 'approver' });
  });

  it('lets listed approvers and members of listed groups decide, and nobody else, not even an admin', () => {
    const base = { policy: withApprovers, requesterId: 'UASKER001', kind: 'create' } as const;
    expect(mayApprove({ ...base, approverId: 'ULEAD0001', approverGroups: [] }).allowed).toBe(true);
    expect(mayApprove({ ...base, approverId: 'UMEMBER01', approverGroups: ['SLEADS001'] }).allowed).toBe(
      true,
    );
    const admin = mayApprove({ ...base, approverId: 'UADMIN01', approverGroups: [] });
    expect(admin).toEqual({
      allowed: false,
      message: 'Only approvers may decide this request: <@ULEAD0001>, <!subteam^SLEADS001>.',
    });
  });

  it('lets a member of any one of several listed groups decide', () => {
    const p = parsePolicy('approvals:\n  approvers: { groups: [SLEADS001, SLEADS002] }\n');
    const base = { policy: p, requesterId: 'UASKER001', kind: 'create' } as const;
    expect(
      mayApprove({ ...base, approverId: 'UMEMBER02', approverGroups: ['SOTHER001', 'SLEADS002'] }),
    ).toEqual({ allowed: true, as: 'approver' });
    expect(mayApprove({ ...base, approverId: 'UMEMBER03', approverGroups: ['SOTHER001'] }).allowed).toBe(
      false,
    );
  });

  it('counts an admin role granted to the channel the approver clicks in', () => {
    const base = anyoneApproving(parsePolicy('roles:\n  admin: { channels: [CAPPROVE1] }\n'));
    expect(mayApprove({ ...base, clickedIn: 'CAPPROVE1' })).toEqual({ allowed: true, as: 'admin' });
    expect(mayApprove({ ...base, clickedIn: 'CELSEWHERE' })).toEqual({
      allowed: false,
      message: 'Only approvers may decide this request: an admin (<#CAPPROVE1>).',
    });
    expect(mayApprove(base).allowed).toBe(false);
  });

  it('with no approvers and no admins, counts an operator role granted to the approver’s channel', () => {
    const base = anyoneApproving(
      parsePolicy('default_role: viewer\nroles:\n  operator: { channels: [COPERS001] }\n'),
    );
    expect(mayApprove({ ...base, clickedIn: 'COPERS001' })).toEqual({ allowed: true, as: 'peer' });
    expect(mayApprove({ ...base, clickedIn: 'CELSEWHERE' }).allowed).toBe(false);
    // Clicked outside any channel (the Home tab): the grant does not count.
    expect(mayApprove(base).allowed).toBe(false);
  });

  it('lists no request by a channel’s grant unless the list is shown in that channel', () => {
    const p = parsePolicy('default_role: viewer\nroles:\n  admin: { channels: [CAPPROVE1] }\n');
    // The card went to the granting channel: that alone lends nobody the role.
    const pending = [
      { id: 'big', requester: 'UASKER001', kind: 'create', approvalChannel: 'CAPPROVE1' },
    ] as const;
    expect(approvableBy(p, 'UVIEW0001', [], pending)).toEqual([]);
    expect(approvableBy(p, 'UVIEW0001', [], pending, 'CELSEWHERE')).toEqual([]);
    expect(approvableBy(p, 'UVIEW0001', [], pending, 'CAPPROVE1').map((r) => r.id)).toEqual(['big']);
  });

  it('names every admin, and at most five in a refusal', () => {
    const admins = ['UADM00001', 'UADM00002', 'UADM00003', 'UADM00004', 'UADM00005', 'UADM00006'];
    const p = parsePolicy(`default_role: viewer\nroles:\n  admin: { users: [${admins.join(', ')}] }\n`);
    expect(describeApprovers(p, 'rm')).toBe(`an admin (${admins.map((a) => `<@${a}>`).join(', ')})`);
    const refused = authorize({ policy: p, userId: 'UVIEW0001', userGroups: [], kind: 'rm' });
    if (refused.allowed) throw new Error('a viewer may not delete');
    expect(refused.message).toContain(
      `ask an admin (${admins
        .slice(0, 5)
        .map((a) => `<@${a}>`)
        .join(', ')})`,
    );
    expect(refused.message).not.toContain('UADM00006');
  });

  it('with self-approval allowed and nobody listed, says anyone with the role may approve', () => {
    const p = parsePolicy('approvals:\n  allow_self_approval: true\n');
    expect(describeApprovers(p, 'rm')).toBe('anyone with the operator role');
  });

  it('lists for an approver only the pending requests they may decide', () => {
    const p = parsePolicy('roles:\n  admin: { users: [UADMIN01] }\n');
    const pending = [
      { id: 'mine', requester: 'UADMIN01', kind: 'rm', approvalChannel: 'CAPPROVE1' },
      { id: 'theirs', requester: 'UASKER001', kind: 'rm', approvalChannel: 'CAPPROVE1' },
    ] as const;
    expect(approvableBy(p, 'UADMIN01', [], pending).map((r) => r.id)).toEqual(['theirs']);
    expect(approvableBy(p, 'UNOBODY01', [], pending)).toEqual([]);
  });

  it('falls back to admins when no approvers are listed', () => {
    const p = parsePolicy('roles:\n  admin: { groups: [SADMINS01] }\n');
    const base = { policy: p, requesterId: 'UASKER001', kind: 'rm' } as const;
    expect(mayApprove({ ...base, approverId: 'UADM00001', approverGroups: ['SADMINS01'] })).toEqual({
      allowed: true,
      as: 'admin',
    });
    expect(mayApprove({ ...base, approverId: 'UOTHER001', approverGroups: [] }).allowed).toBe(false);
    expect(describeApprovers(p, 'rm')).toBe('an admin (<!subteam^SADMINS01>)');
  });

  it('with no approvers and no admins, lets anyone else who could run the operation approve', () => {
    const base = { policy: DEFAULT_POLICY, requesterId: 'UASKER001', kind: 'rm' } as const;
    expect(mayApprove({ ...base, approverId: 'UPEER0001', approverGroups: [] })).toEqual({
      allowed: true,
      as: 'peer',
    });
    expect(describeApprovers(DEFAULT_POLICY, 'rm')).toBe(
      'anyone other than the requester with the operator role',
    );
    const viewers = parsePolicy('default_role: viewer\nroles:\n  operator: { users: [UOPER0001] }\n');
    const refused = mayApprove({
      policy: viewers,
      requesterId: 'UOPER0001',
      kind: 'rm',
      approverId: 'UVIEW0001',
      approverGroups: [],
    });
    expect(refused).toEqual({
      allowed: false,
      message: 'Only someone who may run `/gpu rm` themselves (the *operator* role) may approve it.',
    });
  });
});

describe('approval channel, lease and groups', () => {
  it('sends cards to the policy channel, else the request channel', () => {
    expect(approvalChannelFor(DEFAULT_POLICY, 'CREQ00001')).toBe('CREQ00001');
    expect(approvalChannelFor(parsePolicy('approvals:\n  channel: CAPPROVE1\n'), 'CREQ00001')).toBe(
      'CAPPROVE1',
    );
  });

  it('gives costly or unpriced machines a lease when the policy asks for one', () => {
    const p = parsePolicy(
      'approvals:\n  lease:\n    required_above_per_hour: 20\n    default: 8h\n    remind_before: 30m\n',
    );
    expect(leaseFor({ policy: p, costPerHour: 23.12 })).toEqual({
      requiredAbovePerHour: 20,
      defaultSeconds: 8 * 3600,
      remindBeforeSeconds: 1800,
      maxTotalSeconds: 7 * 86_400,
    });
    expect(leaseFor({ policy: p, costPerHour: 2.89 })).toBeUndefined();
    // Exactly at the bound is not above it.
    expect(leaseFor({ policy: p, costPerHour: 20 })).toBeUndefined();
    expect(leaseFor({ policy: p, costPerHour: 20.01 })).toBeDefined();
    expect(leaseFor({ policy: p, costPerHour: knownCost(23.12) })).toBeDefined();
    expect(leaseFor({ policy: p, costPerHour: knownCost(20) })).toBeUndefined();
    expect(leaseFor({ policy: p, costPerHour: { known: false, reason: 'x' } })).toBeDefined();
    expect(leaseFor({ policy: DEFAULT_POLICY, costPerHour: 500 })).toBeUndefined();
  });

  it('writes user, group, public and private channel ids as Slack mentions', () => {
    expect(mention('UADMIN01')).toBe('<@UADMIN01>');
    expect(mention('SADMINS01')).toBe('<!subteam^SADMINS01>');
    expect(mention('CADMINS01')).toBe('<#CADMINS01>');
    expect(mention('GPRIVATE1')).toBe('<#GPRIVATE1>');
    const p = parsePolicy('roles:\n  admin: { channels: [GPRIVATE1] }\n');
    expect(roleOf({ policy: p, userId: 'UANYONE01', userGroups: [], channelId: 'GPRIVATE1' })).toEqual({
      role: 'admin',
      via: 'granted to <#GPRIVATE1>',
    });
  });

  it('lists the user groups whose membership matters', () => {
    expect(groupsInPolicy(policy).sort()).toEqual(['SADMINS01', 'SOPERS001', 'SVIEWERS1']);
    expect(groupsInPolicy(DEFAULT_POLICY)).toEqual([]);
  });
});

/** A priced estimate, as cost.ts gives one, of `perHour` US dollars. */
function knownCost(perHour: number): KnownCost {
  return {
    known: true,
    perHour,
    perDay: perHour * 24,
    perHourUsd: perHour.toFixed(2),
    perDayUsd: (perHour * 24).toFixed(2),
    state: 'running',
    instanceType: 'h100-hgx-80gb.1x',
    machines: 1,
    gpuType: 'H100_SXM5_80GB',
    gpusPerMachine: 1,
    basis: `1 × H100_SXM5_80GB at $${perHour} per GPU-hour`,
    countOffered: true,
  };
}

/** Someone granted nothing directly deciding another person's `rm`. */
function anyoneApproving(p: ReturnType<typeof parsePolicy>) {
  return {
    policy: p,
    requesterId: 'UASKER001',
    kind: 'rm',
    approverId: 'UANYONE01',
    approverGroups: [],
  } as const;
}
