import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPROVE_ACTION } from '../../src/commands/approvals/render.js';
import { parsePolicy } from '../../src/policy/load-policy.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { openHome, published } from '../support/home-driver.js';
import { blockActionsPayload } from '../support/slack-driver.js';
import { privateAnswer } from './answers.js';
import {
  askForApproval,
  buttonsOf,
  primeCatalog,
  REQUEST_CHANNEL,
  requestJobsInQueue,
  stored,
} from './guardrails-kit.js';

// The built-in access rules: no approvers, no admins, everyone an operator, as with no policy file.
// Members of the bot's workspace (T0FAKE) may ask and approve; a guest (users.info is_restricted) and
// a Slack Connect member of a shared channel (another team) are refused, by command and by button,
// before any listener acts. A costly request's Approve asks to confirm the cost first.

const POLICY = parsePolicy(`
approvals:
  threshold_per_hour: 10
pricing:
  types:
    cpu.16x: { gpu_type: CPU, gpu_count: 0 }
`);

const GUEST = 'U0GUEST';
const EXTERNAL = 'U0EXT';
const OTHER_TEAM = 'T0OTHER';

describe('guests and other workspaces, built-in access rules', () => {
  let stack: BotStack;

  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B', policy: POLICY });
    stack.slack.setUser({ id: GUEST, name: 'guest', is_restricted: true });
    stack.slack.setUser({ id: EXTERNAL, name: 'ext', team_id: OTHER_TEAM });
    await primeCatalog(stack);
  });

  afterAll(async () => {
    await stack?.close();
  });

  /** A press on the card's Approve as someone, from a team; the press's response_url. */
  async function pressApprove(
    pending: Awaited<ReturnType<typeof askForApproval>>,
    userId: string,
    teamId?: string,
  ): Promise<string> {
    const responseUrl = stack.responses.newUrl();
    const response = await stack.interact(
      blockActionsPayload({
        actionId: APPROVE_ACTION,
        value: pending.approvalId,
        text: 'Approve',
        userId,
        ...(teamId ? { teamId } : {}),
        channelId: pending.cardChannel,
        message: { ts: pending.card.ts, text: pending.card.text ?? '', blocks: pending.card.blocks ?? [] },
        responseUrl,
      }),
    );
    expect(response.status).toBe(200);
    return responseUrl;
  }

  /** A press on the card's Approve as someone, from a team; the answer that came on its response_url. */
  async function approveAs(
    pending: Awaited<ReturnType<typeof askForApproval>>,
    userId: string,
    teamId?: string,
  ) {
    const responseUrl = await pressApprove(pending, userId, teamId);
    return stack.responses.waitForPost((p) => responseUrl.endsWith(p.id), 5_000);
  }

  it('refuses a guest’s command with what to do, and queues nothing', async () => {
    const { response } = await stack.command('ls', { userId: GUEST, channelId: REQUEST_CHANNEL });
    const text = String((response.json() as { text?: string }).text);
    expect(text).toMatch(/^Guest accounts cannot use gpuops in this workspace/);
    expect(text).toContain('access.allow_guests');
    expect(await requestJobsInQueue(stack)).toEqual([]);
  });

  it('shows a guest who opens the Home tab why, instead of a Home', async () => {
    const since = stack.slack.mark();
    await openHome(stack, GUEST);
    const call = await published(stack, since, () => true, GUEST);
    const text = JSON.stringify(call.body.view);
    expect(text).toContain('Guest accounts cannot use gpuops in this workspace');
    expect(text).not.toContain('Your machines');
  });

  it('refuses a command from another workspace, naming the policy key that would allow it', async () => {
    const { response } = await stack.command('ls', { userId: EXTERNAL, channelId: REQUEST_CHANNEL });
    const text = String((response.json() as { text?: string }).text);
    expect(text).toContain('only from members of its own workspace');
    expect(text).toContain('access.allowed_teams');
  });

  it('refuses Approve from a guest and from a Slack Connect member; the request keeps waiting', async () => {
    const pending = await askForApproval(stack, 'create big-1 h100-hgx-80gb.8x', {
      userId: 'U0ADA',
      approvalChannel: REQUEST_CHANNEL,
    });
    const byGuest = await approveAs(pending, GUEST);
    expect(String(byGuest.body.text)).toMatch(/^Guest accounts cannot use gpuops/);
    // A shared channel's member: the payload names their own team, unknown to users.info here.
    const byExternal = await approveAs(pending, 'U0STRANGER', OTHER_TEAM);
    expect(String(byExternal.body.text)).toContain('only from members of its own workspace');
    expect((await stored(stack, pending.approvalId)).state).toBe('pending');
    expect(await requestJobsInQueue(stack)).toEqual([]);
  });

  it('tells a guest why where they pressed when the click’s response_url no longer takes answers', async () => {
    const pending = await askForApproval(stack, 'create big-3 h100-hgx-80gb.8x', {
      userId: 'U0ADA',
      approvalChannel: REQUEST_CHANNEL,
    });
    stack.responses.issueExpired(1);
    const since = stack.slack.mark();
    const responseUrl = await pressApprove(pending, GUEST);
    const told = await stack.slack.waitFor(
      'chat.postEphemeral',
      (c) => c.body.user === GUEST && c.body.channel === pending.cardChannel,
      5_000,
      since,
    );
    expect(String(told.body.text)).toMatch(/^Guest accounts cannot use gpuops in this workspace/);
    expect(stack.responses.refused).toContain(responseUrl.split('/').at(-1));
    expect((await stored(stack, pending.approvalId)).state).toBe('pending');
  });

  it('asks to confirm the cost on Approve of a request above the threshold', async () => {
    const pending = await askForApproval(stack, 'create big-2 h100-hgx-80gb.8x', {
      userId: 'U0ADA',
      approvalChannel: REQUEST_CHANNEL,
    });
    const [approve, deny] = buttonsOf(pending.card.blocks) as Array<{
      confirm?: Record<string, { text: string }>;
    }>;
    expect(approve?.confirm?.title?.text).toBe('Approve this cost?');
    expect(approve?.confirm?.text?.text).toContain('$23.12/h · $554.88/day');
    expect(deny?.confirm).toBeUndefined();
  });
});

// Installed for a whole Enterprise Grid organisation (custom steps need it), auth.test names the
// organisation (E0ORG) and no workspace. The check must not switch itself off then: only the
// organisation's members get in, and only because the policy says so (access.allow_own_enterprise).
describe('an org-wide install, where auth.test names no workspace', () => {
  const ORG = 'E0ORG';
  const OUTSIDER = 'U0OUTSIDE';
  let stacks: BotStack[] = [];
  const start = async (policy: string) => {
    const stack = await startBotStack({
      shape: 'B',
      policy: parsePolicy(policy),
      slack: { orgWideInstall: true, enterpriseId: ORG },
    });
    stack.slack.setUser({ id: 'U0ADA', name: 'ada' });
    stack.slack.setUser({ id: OUTSIDER, name: 'outsider', team_id: 'T0ELSE', enterprise_id: 'E0ELSE' });
    stacks.push(stack);
    return stack;
  };
  const ls = async (stack: BotStack, userId: string) =>
    String(
      (
        (await stack.command('ls', { userId, channelId: REQUEST_CHANNEL })).response.json() as {
          text?: string;
        }
      ).text,
    );

  afterAll(async () => {
    for (const s of stacks) await s.close();
    stacks = [];
  });

  it('refuses everyone the policy does not let in, saying which key would', async () => {
    const stack = await start('version: 1\n');
    const text = await ls(stack, 'U0ADA');
    expect(text).toMatch(
      /^gpuops is installed for a whole organisation and takes requests only from workspaces its policy names/,
    );
    expect(text).toContain('access.allow_own_enterprise');
    expect(await requestJobsInQueue(stack)).toEqual([]);
  });

  it("lets the organisation's members in with access.allow_own_enterprise, and nobody else", async () => {
    const stack = await start('version: 1\naccess:\n  allow_own_enterprise: true\n');
    // A member of the organisation gets the listing, on the response_url as usual.
    const listing = await privateAnswer(stack, 'ls', { userId: 'U0ADA' });
    expect(listing.text).not.toContain('gpuops');
    const outsider = await ls(stack, OUTSIDER);
    expect(outsider).toContain('gpuops is installed for a whole organisation');
    // Ada's job may still be finishing after her answer was posted: only the outsider's must be absent.
    const outsiders = (await requestJobsInQueue(stack)).filter(
      (job) => (job.data as { ctx?: { userId?: string } }).ctx?.userId === OUTSIDER,
    );
    expect(outsiders).toEqual([]);
  });
});
