import { describe, expect, it } from 'vitest';
import { parsePolicy } from '../../src/policy/load-policy.js';
import { DEFAULT_POLICY } from '../../src/policy/policy.js';
import { mayUse, needsStanding, noDeciderWarning } from '../../src/policy/workspace-access.js';

// What the audit trail and the start-up log say about who may reach gpuops
// (src/policy/workspace-access.ts): the reason kept for each refusal, when Slack has to be asked who
// someone is at all, and the warning for a policy that names nobody to decide approvals.

const bot = { teamId: 'T0OWN' };
const member = { teamId: 'T0OWN', guest: false, homeTeamId: 'T0OWN' };

describe('the reasons the audit trail keeps for a refusal', () => {
  it('names a deactivated account first, whatever else is true of it', () => {
    const open = parsePolicy('version: 1\naccess:\n  allow_guests: true\n  allow_other_workspaces: true\n');
    const check = mayUse(open, bot, { ...member, guest: true, deactivated: true });
    expect(check).toMatchObject({ allowed: false, reason: 'deactivated' });
    expect(mayUse(DEFAULT_POLICY, bot, { ...member, deactivated: false })).toEqual({ allowed: true });
  });

  it('calls a request with no workspace and one from a foreign workspace "other-workspace"', () => {
    expect(mayUse(DEFAULT_POLICY, bot, { teamId: undefined, guest: false })).toMatchObject({
      allowed: false,
      reason: 'other-workspace',
    });
    expect(mayUse(DEFAULT_POLICY, bot, { ...member, teamId: 'T0ELSE' })).toMatchObject({
      allowed: false,
      reason: 'other-workspace',
      message: expect.stringMatching(
        /^gpuops takes requests only from members of its own workspace, and you are signed in from another \(T0ELSE\)\. Ask an admin/,
      ),
    });
  });

  it('lets in a workspace the policy names, and still refuses a guest from it', () => {
    const named = parsePolicy('version: 1\naccess:\n  allowed_teams: [T0PARTNER]\n');
    expect(mayUse(named, bot, { ...member, teamId: 'T0PARTNER', homeTeamId: 'T0PARTNER' })).toEqual({
      allowed: true,
    });
    expect(mayUse(named, bot, { ...member, teamId: 'T0PARTNER', guest: true })).toMatchObject({
      allowed: false,
      reason: 'guest',
    });
  });
});

describe('whether Slack is asked who someone is', () => {
  it('asks unless the policy lets both guests and other workspaces in', () => {
    const policy = (lines: string) => parsePolicy(`version: 1\naccess:\n${lines}`);
    expect(needsStanding(DEFAULT_POLICY)).toBe(true);
    expect(needsStanding(policy('  allow_guests: true\n'))).toBe(true);
    expect(needsStanding(policy('  allow_other_workspaces: true\n'))).toBe(true);
    expect(needsStanding(policy('  allow_guests: true\n  allow_other_workspaces: true\n'))).toBe(false);
  });
});

describe('the start-up warning for a policy with nobody to decide approvals', () => {
  it('warns when the policy names no approver and no admin, saying what to set', () => {
    const warning = noDeciderWarning(parsePolicy('version: 1\ndefault_role: operator\n', 'gpuops.yaml'));
    expect(warning).toBe(
      "The policy (gpuops.yaml) names no approvers and no admins: any member whose role allows an operation may approve someone else's request for it. Set approvals.approvers or roles.admin in GPUOPS_POLICY (docs/policy.md).",
    );
  });

  it('is silent once any one approver or admin is named, by user, group or channel', () => {
    for (const lines of [
      'approvals:\n  approvers: { users: [U0BOB] }\n',
      'approvals:\n  approvers: { groups: [S0APPROVERS] }\n',
      'roles:\n  admin: { users: [U0ADM] }\n',
      'roles:\n  admin: { groups: [S0ADMINS] }\n',
      'roles:\n  admin: { channels: [C0ADMINS] }\n',
    ]) {
      expect(noDeciderWarning(parsePolicy(`version: 1\n${lines}`)), lines).toBeUndefined();
    }
  });
});
