import { describe, expect, it } from 'vitest';
import { PolicyError, parsePolicy } from '../../src/policy/load-policy.js';
import { DEFAULT_POLICY } from '../../src/policy/policy.js';

// `budgets:` in the policy file (docs/budgets.md): read with its defaults, and each mistake refused in
// one sentence at its line, so a team sees what to fix before a budget silently guards nothing.

const ML = '3c1d0e2f-5a6b-4c7d-8e9f-0a1b2c3d4e5f';

function failure(text: string): PolicyError {
  try {
    parsePolicy(text, 'team.yaml');
  } catch (err) {
    if (err instanceof PolicyError) return err;
    throw err;
  }
  throw new Error('expected the policy to be refused');
}

describe('budgets in the policy file', () => {
  it('has none by default, and reads one with the defaults filled in', () => {
    expect(DEFAULT_POLICY.budgets).toEqual([]);
    const policy = parsePolicy(
      [
        'budgets:',
        '  ml-team:',
        '    monthly_usd: 40000',
        `    projects: [${ML}]`,
        '    owners: [U0ADA, W0BOB]',
        '    channel: C0BUDGET',
        '  everything:',
        '    monthly_usd: 100000.5',
        '    owners: [U0ADA]',
        '    alert_at: [90, 25]',
        '    forecast_alert: false',
        '    hard_cap: true',
        '',
      ].join('\n'),
      't',
    );
    expect(policy.budgets).toEqual([
      {
        name: 'ml-team',
        monthlyUsd: 40000,
        projects: [ML],
        owners: ['U0ADA', 'W0BOB'],
        channel: 'C0BUDGET',
        alertAt: [50, 80, 100],
        forecastAlert: true,
        hardCap: false,
      },
      {
        name: 'everything',
        monthlyUsd: 100000.5,
        projects: [],
        owners: ['U0ADA'],
        alertAt: [25, 90],
        forecastAlert: false,
        hardCap: true,
      },
    ]);
  });

  it.each([
    {
      name: 'a missing amount',
      text: 'budgets:\n  ml:\n    owners: [U0ADA]\n',
      line: 2,
      at: 'budgets.ml.monthly_usd',
      rule: 'monthly_usd is required: the budget in US dollars a month, a number above 0 such as 40000',
    },
    {
      name: 'an amount of 0',
      text: 'budgets:\n  ml:\n    monthly_usd: 0\n    owners: [U0ADA]\n',
      line: 3,
      at: 'budgets.ml.monthly_usd',
      rule: 'monthly_usd must be more than 0 US dollars a month',
    },
    {
      name: 'a project that is not a project id',
      text: 'budgets:\n  ml:\n    monthly_usd: 10\n    projects: [ml-project]\n    owners: [U0ADA]\n',
      line: 4,
      at: 'budgets.ml.projects[0]',
      rule: 'unknown project "ml-project": a project is named by its id, a UUID such as 3c1d0e2f-5a6b-4c7d-8e9f-0a1b2c3d4e5f (`/gpu project` shows it)',
    },
    {
      name: 'an owner that is not a user id',
      text: 'budgets:\n  ml:\n    monthly_usd: 10\n    owners: ["@ada"]\n',
      line: 4,
      at: 'budgets.ml.owners[0]',
      rule: 'a Slack user id starts with U or W, such as U012AB3CDE (profile → ⋮ → Copy member ID)',
    },
    {
      name: 'no owner',
      text: 'budgets:\n  ml:\n    monthly_usd: 10\n    owners: []\n',
      line: 4,
      at: 'budgets.ml.owners',
      rule: 'a budget needs at least one owner: the Slack users who approve requests over it and get its alerts',
    },
    {
      name: 'a threshold out of range',
      text: 'budgets:\n  ml:\n    monthly_usd: 10\n    owners: [U0ADA]\n    alert_at: [50, 1500]\n',
      line: 5,
      at: 'budgets.ml.alert_at[1]',
      rule: 'an alert threshold is a whole percentage of the monthly amount from 1 to 1000, such as 80',
    },
    {
      name: 'a threshold twice',
      text: 'budgets:\n  ml:\n    monthly_usd: 10\n    owners: [U0ADA]\n    alert_at: [80, 80]\n',
      line: 5,
      at: 'budgets.ml.alert_at',
      rule: 'alert_at lists 80 twice; list each threshold once',
    },
    {
      name: 'a channel name instead of its id',
      text: 'budgets:\n  ml:\n    monthly_usd: 10\n    owners: [U0ADA]\n    channel: "#ml"\n',
      line: 5,
      at: 'budgets.ml.channel',
      rule: 'a Slack channel id starts with C or G, such as C0123ABCDEF (shown at the bottom of the channel details)',
    },
    {
      name: 'a misspelt key',
      text: 'budgets:\n  ml:\n    monthly_usd: 10\n    owners: [U0ADA]\n    hardcap: true\n',
      line: 5,
      at: 'budgets.ml.hardcap',
      rule: 'unknown setting "hardcap"; expected one of monthly_usd, projects, owners, channel, alert_at, forecast_alert, hard_cap',
    },
    {
      name: 'a name with a space',
      text: 'budgets:\n  ml team:\n    monthly_usd: 10\n    owners: [U0ADA]\n',
      line: 2,
      at: 'budgets["ml team"]',
      rule: 'a budget name is 1 to 40 letters, digits, - or _, such as ml-team',
    },
  ])('refuses $name in one sentence at its line', ({ text, line, at, rule }) => {
    const err = failure(text);
    expect(err.problems).toEqual([{ line, column: expect.any(Number), at, rule }]);
  });
});
