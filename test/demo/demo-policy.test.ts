import { describe, expect, it } from 'vitest';
import { usernameFromSlackUser } from '../../src/commands/kit/posix-username.js';
import { DEMO_PEOPLE } from '../../src/demo/demo-people.js';
import { demoPolicyYaml } from '../../src/demo/demo-policy.js';
import { authorize, mayApprove, roleOf } from '../../src/policy/decide.js';
import { parsePolicy } from '../../src/policy/load-policy.js';
import { DEFAULT_POLICY } from '../../src/policy/policy.js';

// The people of `gpuops demo` and its policy: Ada asks, Bob approves, Carol only looks, and each
// profile gives the Slurm username docs/demo.md promises.

// The simulator gives the research project its id at start; any project id stands in for it here.
const RESEARCH = '3c1d0e2f-5a6b-4c7d-8e9f-0a1b2c3d4e5f';
const policy = parsePolicy(demoPolicyYaml(RESEARCH), 'demo-policy.yaml');
const who = (userId: string) => ({ policy, userId, userGroups: [], channelId: 'C0GPUOPS' });

describe('the demo policy', () => {
  it('parses, and gives Ada operator, Bob admin and Carol viewer', () => {
    expect(roleOf(who('U0ADA')).role).toBe('operator');
    expect(roleOf(who('U0BOB')).role).toBe('admin');
    expect(roleOf(who('U0CAROL')).role).toBe('viewer');
    expect(authorize({ ...who('U0ADA'), kind: 'create' }).allowed).toBe(true);
    expect(authorize({ ...who('U0CAROL'), kind: 'create' }).allowed).toBe(false);
    expect(policy.approvals.thresholdPerHour).toBe(10);
  });

  it('lets Bob, and not Ada herself, approve what Ada asks', () => {
    const approve = (approverId: string) =>
      mayApprove({ policy, approverId, approverGroups: [], requesterId: 'U0ADA', kind: 'create' }).allowed;
    expect(approve('U0BOB')).toBe(true);
    expect(approve('U0ADA')).toBe(false);
    expect(approve('U0CAROL')).toBe(false);
  });

  it('lets a script send more than the default 30 requests a minute, and leaves the default alone', () => {
    expect(policy.rateLimits.perUser.requests).toBe(300);
    expect(policy.rateLimits.perChannel.requests).toBe(600);
    expect(DEFAULT_POLICY.rateLimits.perUser.requests).toBe(30);
    expect(DEFAULT_POLICY.rateLimits.perChannel.requests).toBe(60);
  });

  it('has the team budget Bob owns in #gpu-ops, and a tiny one on the research project alone in #ml-research', () => {
    expect(policy.budgets).toEqual([
      expect.objectContaining({
        name: 'demo-team',
        projects: [],
        owners: ['U0BOB'],
        channel: 'C0GPUOPS',
        monthlyUsd: 250_000,
      }),
      expect.objectContaining({
        name: 'research',
        projects: [RESEARCH],
        owners: ['U0BOB'],
        channel: 'C0ML',
        monthlyUsd: 1,
      }),
    ]);
  });

  it('derives Slurm usernames from the demo profiles', () => {
    const names = DEMO_PEOPLE.map((p) =>
      usernameFromSlackUser({
        name: p.name,
        real_name: p.realName,
        profile: { display_name: p.displayName },
      }),
    );
    expect(names).toEqual(['ada_lovelace', 'bob_noyce', 'carol_shaw']);
  });
});
