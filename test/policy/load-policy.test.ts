import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPolicy, PolicyError, parsePolicy } from '../../src/policy/load-policy.js';
import { DEFAULT_POLICY, DEFAULTS_SOURCE } from '../../src/policy/policy.js';

const EXAMPLE = resolve(new URL('../../docs/policy.example.yaml', import.meta.url).pathname);

function failure(text: string): PolicyError {
  try {
    parsePolicy(text, 'team.yaml');
  } catch (err) {
    if (err instanceof PolicyError) return err;
    throw err;
  }
  throw new Error('expected the policy to be refused');
}

describe('loading the policy file', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gpuops-policy-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads the documented example', async () => {
    const policy = await loadPolicy(EXAMPLE);
    expect(policy.source).toBe(EXAMPLE);
    expect(policy.defaultRole).toBe('viewer');
    expect(policy.grants.admin.users).toEqual(['U0LEAD0001']);
    expect(policy.grants.operator).toEqual({ users: [], groups: ['S0MLPLATFORM'], channels: ['C0GPUOPS01'] });
    expect(policy.kinds['k8s.kubeconfig']).toBe('admin');
    expect(policy.approvals).toEqual({
      thresholdPerHour: 20,
      always: ['rm', 'fs.rm', 'k8s.rm', 'k8s.pool.rm', 'slurm.rm', 'slurm.pool.rm', 'slurm.sudo'],
      approvers: { users: ['U0LEAD0001'], groups: ['S0GPULEADS'] },
      allowSelfApproval: false,
      unknownPrice: 'ask',
      expiresAfterSeconds: 24 * 3600,
      channel: 'C0APPROVAL1',
      lease: {
        requiredAbovePerHour: 20,
        defaultSeconds: 8 * 3600,
        remindBeforeSeconds: 30 * 60,
        maxTotalSeconds: 3 * 86_400,
      },
    });
    expect(policy.audit).toEqual({ retentionSeconds: 90 * 86_400, channel: 'C0AUDITLOG1' });
    expect(policy.pricing.types['custom-h100-box.4x']).toEqual({ gpuType: 'H100_SXM5_80GB', gpuCount: 4 });
    expect(policy.login).toEqual({
      defaultUser: 'ubuntu',
      byType: { 'cpu.16x': 'admin' },
      byImage: { 'rocky9-cuda12': 'rocky' },
    });
    expect(policy.budgets.map((b) => [b.name, b.monthlyUsd, b.owners, b.alertAt, b.hardCap])).toEqual([
      ['ml-team', 40000, ['U0LEAD0001'], [50, 80, 100], false],
    ]);
  });

  it('uses the safe defaults with no file, and an empty file changes nothing', async () => {
    expect(await loadPolicy(undefined)).toBe(DEFAULT_POLICY);
    expect(DEFAULT_POLICY.source).toBe(DEFAULTS_SOURCE);
    expect(DEFAULT_POLICY.defaultRole).toBe('operator');
    expect(DEFAULT_POLICY.approvals.thresholdPerHour).toBe(10);
    expect(DEFAULT_POLICY.approvals.allowSelfApproval).toBe(false);
    expect(DEFAULT_POLICY.approvals.expiresAfterSeconds).toBe(86_400);
    expect(DEFAULT_POLICY.approvals.always).toEqual([
      'rm',
      'fs.rm',
      'k8s.rm',
      'k8s.pool.rm',
      'slurm.rm',
      'slurm.pool.rm',
      'slurm.sudo',
    ]);
    expect(DEFAULT_POLICY.audit.retentionSeconds).toBe(30 * 86_400);
    // Guests and other workspaces are refused until the policy lets them in.
    expect(DEFAULT_POLICY.access).toEqual({
      allowGuests: false,
      allowOtherWorkspaces: false,
      allowedTeams: [],
      allowOwnEnterprise: false,
    });
    const empty = join(dir, 'empty.yaml');
    await writeFile(empty, '# nothing yet\n');
    const loaded = await loadPolicy(empty);
    expect({ ...loaded, source: DEFAULTS_SOURCE }).toEqual(DEFAULT_POLICY);
  });

  it('refuses a path that cannot be read instead of silently using the defaults', async () => {
    const missing = join(dir, 'nope.yaml');
    await expect(loadPolicy(missing)).rejects.toThrow(
      `The policy file ${missing} is invalid at line 1, column 1: cannot read it (there is no such file)`,
    );
  });

  it('names the file, line, column and rule of a bad file on disk', async () => {
    const file = join(dir, 'bad.yaml');
    await writeFile(file, 'approvals:\n  threshold_per_hour: 10\n  expires_after: soon\n');
    const err = await loadPolicy(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PolicyError);
    expect((err as PolicyError).message).toBe(
      `The policy file ${file} is invalid at line 3, column 18 (approvals.expires_after): a duration is a whole ` +
        'number with a unit s, m, h, d or w, such as 30m, 8h, 1h30m or 30d.\nFix it and start again (see docs/policy.md).',
    );
  });

  it.each([
    {
      name: 'an unknown role granted',
      text: 'roles:\n  admin:\n    users: [U0ADMIN001]\n  superuser:\n    users: [U0ROOT0001]\n',
      line: 4,
      column: 3,
      at: 'roles.superuser',
      rule: 'unknown role "superuser": roles are viewer, operator and admin',
    },
    {
      name: 'an unknown role as the default',
      text: '# team policy\ndefault_role: root\n',
      line: 2,
      column: 15,
      at: 'default_role',
      rule: 'unknown role "root": roles are viewer, operator and admin',
    },
    {
      name: 'an unknown role required for a class',
      text: 'permissions:\n  classes:\n    destroy: owner\n',
      line: 3,
      column: 14,
      at: 'permissions.classes.destroy',
      rule: 'unknown role "owner": roles are viewer, operator and admin',
    },
    {
      name: 'a bad duration',
      text: 'approvals:\n  lease:\n    required_above_per_hour: 5\n    default: 8 hours\n',
      line: 4,
      column: 14,
      at: 'approvals.lease.default',
      rule: 'a duration is a whole number with a unit s, m, h, d or w, such as 30m, 8h, 1h30m or 30d',
    },
    {
      name: 'a negative threshold',
      text: 'approvals:\n  threshold_per_hour: -5\n',
      line: 2,
      column: 23,
      at: 'approvals.threshold_per_hour',
      rule: 'threshold_per_hour must be 0 or more US dollars per hour',
    },
    {
      name: 'an unknown kind in always',
      text: 'approvals:\n  always:\n    - rm\n    - delete-everything\n',
      line: 4,
      column: 7,
      at: 'approvals.always[1]',
      rule: 'unknown kind "delete-everything": a kind is a /gpu subcommand with its words joined by dots, such as rm, fs.rm, k8s.pool.rm or slurm.sudo (docs/commands.md)',
    },
    {
      name: 'an unknown kind in a flow list',
      text: 'approvals:\n  always: [rm, k8s.nuke]\n',
      line: 2,
      column: 16,
      at: 'approvals.always[1]',
      rule: 'unknown kind "k8s.nuke": a kind is a /gpu subcommand with its words joined by dots, such as rm, fs.rm, k8s.pool.rm or slurm.sudo (docs/commands.md)',
    },
    {
      name: 'a wrong type (text where a list goes)',
      text: 'roles:\n  operator:\n    users: U0ALICE001\n',
      line: 3,
      column: 12,
      at: 'roles.operator.users',
      rule: 'expected a list, found text "U0ALICE001"',
    },
    {
      name: 'a wrong type (text where a number goes)',
      text: 'approvals:\n  threshold_per_hour: ten dollars\n',
      line: 2,
      column: 23,
      at: 'approvals.threshold_per_hour',
      rule: 'threshold_per_hour is a number of US dollars per hour, such as 10 or 2.5',
    },
    {
      name: 'a wrong type (text where true or false goes)',
      text: 'approvals:\n  allow_self_approval: sometimes\n',
      line: 2,
      column: 24,
      at: 'approvals.allow_self_approval',
      rule: 'expected true or false',
    },
    {
      name: 'a misspelt setting',
      text: 'approvals:\n  threshhold_per_hour: 5\n',
      line: 2,
      column: 3,
      at: 'approvals.threshhold_per_hour',
      rule: 'unknown setting "threshhold_per_hour"; expected one of threshold_per_hour, always, approvers, allow_self_approval, unknown_price, expires_after, channel, lease',
    },
    {
      name: 'a channel name instead of an id',
      text: 'audit:\n  channel: "#gpu-audit"\n',
      line: 2,
      column: 12,
      at: 'audit.channel',
      rule: 'a Slack channel id starts with C or G, such as C0123ABCDEF (shown at the bottom of the channel details)',
    },
    {
      name: 'a reminder longer than the lease',
      text: 'approvals:\n  lease:\n    required_above_per_hour: 5\n    default: 1h\n    remind_before: 2h\n',
      line: 5,
      column: 20,
      at: 'approvals.lease.remind_before',
      rule: 'lease.remind_before must be shorter than lease.default, or the reminder comes before the lease starts',
    },
    {
      name: 'a lease maximum shorter than the lease',
      text: 'approvals:\n  lease:\n    required_above_per_hour: 5\n    default: 8h\n    max_total: 4h\n',
      line: 5,
      column: 16,
      at: 'approvals.lease.max_total',
      rule: 'lease.max_total must be at least lease.default, or no lease could start',
    },
    {
      name: 'a required setting left out',
      text: 'approvals:\n  lease:\n    default: 8h\n',
      line: 2,
      column: 3,
      at: 'approvals.lease.required_above_per_hour',
      rule: 'lease.required_above_per_hour is required: a number of US dollars per hour, such as 10 or 2.5',
    },
    {
      name: 'a workspace that is not a team id',
      text: 'access:\n  allow_guests: true\n  allowed_teams: [acme]\n',
      line: 3,
      column: 19,
      at: 'access.allowed_teams[0]',
      rule: 'a Slack workspace id starts with T, such as T012AB3CDE (auth.test or the workspace URL)',
    },
    {
      name: 'broken YAML',
      text: 'roles:\n  admin: { users: [U0ADMIN001]\n',
      line: 3,
      column: 1,
      at: '',
      rule: expect.stringMatching(/^YAML syntax: /),
    },
  ])('reports $name at its line with the rule', ({ text, line, column, at, rule }) => {
    const err = failure(text);
    expect(err.problems[0]).toEqual({ line, column, at, rule });
    expect(err.line).toBe(line);
    expect(err.message).toContain('team.yaml');
    expect(err.message).toContain(`line ${line}, column ${column}`);
    expect(err.code).toBe('config_invalid');
  });

  it('lists every problem, in file order', () => {
    const err = failure('default_role: root\napprovals:\n  threshold_per_hour: -1\n  always: [rm, nuke]\n');
    expect(err.problems.map((p) => [p.line, p.at])).toEqual([
      [1, 'default_role'],
      [3, 'approvals.threshold_per_hour'],
      [4, 'approvals.always[1]'],
    ]);
    expect(err.message.split('\n')).toHaveLength(4);
  });

  it('reads who ssh logs in as (default ubuntu), and refuses a user name ssh could not take, in one sentence', () => {
    expect(DEFAULT_POLICY.login).toEqual({ defaultUser: 'ubuntu', byType: {}, byImage: {} });
    const policy = parsePolicy('login:\n  default_user: root\n  by_image: { rocky9: rocky }\n', 't');
    expect(policy.login).toEqual({ defaultUser: 'root', byType: {}, byImage: { rocky9: 'rocky' } });
    const err = failure('login:\n  by_type:\n    h100-hgx-80gb.8x: Ada Lovelace\n  default: ubuntu\n');
    expect(err.problems.map((p) => [p.line, p.at, p.rule])).toEqual([
      [
        3,
        'login.by_type["h100-hgx-80gb.8x"]',
        'a login user is a POSIX user name: a lowercase letter or _, then lowercase letters, digits, _ or -, at most 32 characters, such as ubuntu or root',
      ],
      [4, 'login.default', 'unknown setting "default"; expected one of default_user, by_type, by_image'],
    ]);
    expect(failure('login: ubuntu\n').problems[0]).toMatchObject({
      at: 'login',
      rule: 'expected a mapping of settings, found text "ubuntu"',
    });
  });

  it('reads the rate limits (0 turns one off), with a default for each, and refuses a negative count', () => {
    expect(DEFAULT_POLICY.rateLimits).toEqual({
      perUser: { requests: 30, perSeconds: 60 },
      perChannel: { requests: 60, perSeconds: 60 },
    });
    const policy = parsePolicy(
      'rate_limits:\n  per_user: { requests: 5, per: 10s }\n  per_channel: { requests: 0 }\n',
      't',
    );
    expect(policy.rateLimits).toEqual({
      perUser: { requests: 5, perSeconds: 10 },
      perChannel: { requests: 0, perSeconds: 60 },
    });
    const err = failure('rate_limits:\n  per_user: { requests: -1 }\n');
    expect(err.problems[0]?.at).toBe('rate_limits.per_user.requests');
    expect(err.problems[0]?.rule).toContain('0 for no limit');
  });
});
