import { describe, expect, it } from 'vitest';
import { parsePolicy } from '../../src/policy/load-policy.js';
import { DEFAULT_POLICY } from '../../src/policy/policy.js';
import { mayUse } from '../../src/policy/workspace-access.js';

// Who gets past the workspace check, with the bot's home as auth.test gives it. With no workspace
// (an org-wide install) the check fails closed instead of switching itself off.

const member = { teamId: 'T0OWN', guest: false, homeTeamId: 'T0OWN', enterpriseId: 'E0ORG' };
const ownOrg = parsePolicy('version: 1\naccess:\n  allow_own_enterprise: true\n');

describe('the workspace check', () => {
  it('lets the bot workspace in and refuses another one', () => {
    expect(mayUse(DEFAULT_POLICY, { teamId: 'T0OWN' }, member)).toEqual({ allowed: true });
    const other = mayUse(DEFAULT_POLICY, { teamId: 'T0OWN' }, { ...member, homeTeamId: 'T0ELSE' });
    expect(other).toMatchObject({ allowed: false, message: expect.stringContaining('(T0ELSE)') });
  });

  it('refuses everyone on an org-wide install unless the policy names them', () => {
    const check = mayUse(DEFAULT_POLICY, { teamId: undefined, enterpriseId: 'E0ORG' }, member);
    expect(check).toMatchObject({
      allowed: false,
      message: expect.stringMatching(
        /^gpuops is installed for a whole organisation .* access\.allow_own_enterprise/,
      ),
    });
    const named = parsePolicy('version: 1\naccess:\n  allowed_teams: [T0OWN]\n');
    expect(mayUse(named, { teamId: undefined }, member)).toEqual({ allowed: true });
  });

  it("lets the organisation's members in with allow_own_enterprise, and nobody of another", () => {
    expect(mayUse(ownOrg, { teamId: undefined, enterpriseId: 'E0ORG' }, member)).toEqual({ allowed: true });
    expect(
      mayUse(ownOrg, { teamId: undefined, enterpriseId: 'E0ORG' }, { ...member, enterpriseId: 'E0ELSE' })
        .allowed,
    ).toBe(false);
    // Without the organisation known (Slack did not say), nobody gets in by it.
    expect(mayUse(ownOrg, { teamId: undefined }, { ...member, enterpriseId: undefined }).allowed).toBe(false);
    expect(
      mayUse(ownOrg, { teamId: undefined, enterpriseId: 'E0ORG' }, { ...member, enterpriseId: undefined })
        .allowed,
    ).toBe(false);
  });

  it('refuses a request that names no workspace at all', () => {
    const check = mayUse(DEFAULT_POLICY, { teamId: 'T0OWN' }, { teamId: undefined, guest: false });
    expect(check).toMatchObject({
      allowed: false,
      message: expect.stringMatching(/^gpuops could not tell which workspace/),
    });
  });

  it('lets anyone in with allow_other_workspaces, guests still by their own rule', () => {
    const open = parsePolicy('version: 1\naccess:\n  allow_other_workspaces: true\n');
    expect(mayUse(open, { teamId: undefined }, { teamId: undefined, guest: false })).toEqual({
      allowed: true,
    });
    expect(mayUse(open, { teamId: undefined }, { ...member, guest: true }).allowed).toBe(false);
  });
});
