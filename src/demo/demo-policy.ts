import { ADA, BOB, DEMO_CHANNEL } from './demo-people.js';
import { RESEARCH_BUDGET } from './research-project.js';

// The demo's policy file (docs/policy.md), written to the demo's temporary folder and named by
// GPUOPS_POLICY: Ada is an operator, Bob the admin and the one approver, everyone else a viewer.
// Anything above $10 an hour, and every delete, waits for Bob's Approve; Bob owns the demo's two budgets.
// A script types faster than a person, so the demo's people get a rate limit of their own; the default
// (30 a minute) stays.

/** The demo budget's monthly amount unless `--budget` says otherwise: no request of a tour waits on it. */
export const DEMO_BUDGET_USD = 250_000;

/**
 * The policy with the team's budget at `budgetUsd` a month, and the tiny research budget on the
 * simulator's research project (research-project.ts), whose id the simulator gives at start.
 */
export function demoPolicyYaml(researchProjectId: string, budgetUsd: number = DEMO_BUDGET_USD): string {
  return `# gpuops demo policy (src/demo/demo-policy.ts)
version: 1
default_role: viewer
roles:
  admin:
    users: [${BOB}]
  operator:
    users: [${ADA}]
approvals:
  threshold_per_hour: 10
  approvers:
    users: [${BOB}]
  allow_self_approval: false
  expires_after: 24h
audit:
  retention: 30d
# Quick looks, so the Home tab and /gpu watch show a change within seconds in a demo.
watch:
  poll_every: 3s
# A script sends a command as soon as the last one settles: dozens a minute, from one person in one
# channel. The defaults (30 and 60 a minute) are for people typing.
rate_limits:
  per_user: { requests: 300, per: 1m }
  per_channel: { requests: 600, per: 1m }
# Budgets for /gpu budget, /gpu spend, the Home tab and the digest; Bob owns both and gets their alerts.
# demo-team covers every project, and is by default large enough that no request of the tour waits for
# Bob because of it (\`--budget 1\` makes it alert too). ${RESEARCH_BUDGET.name} covers only the research project,
# whose machines already run: it is over its forecast at the first check, so its alert shows at start.
budgets:
  demo-team:
    monthly_usd: ${budgetUsd}
    owners: [${BOB}]
    channel: ${DEMO_CHANNEL}
  ${RESEARCH_BUDGET.name}:
    monthly_usd: ${RESEARCH_BUDGET.monthlyUsd}
    projects: [${researchProjectId}]
    owners: [${RESEARCH_BUDGET.owner}]
    channel: ${RESEARCH_BUDGET.channel}
`;
}
