import { createHash } from 'node:crypto';
import { LogLevel, WebClient } from '@slack/web-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCommand } from '../../src/commands/parse-command.js';
import type { JobContext } from '../../src/jobs/job-data.js';
import { enqueueRequest, requestJobId } from '../../src/requests/enqueue-request.js';
import { slackRequestPorts } from '../../src/slack/request-ports.js';
import { getSchedule, listSchedules, type Schedule, saveSchedule } from '../../src/store/schedules.js';
import { BOT_TOKEN, type BotStack, startBotStack } from '../support/bot-stack.js';
import { settled } from '../support/slash-requests.js';
import { until } from '../support/until.js';
import { CHANNEL } from './answers.js';
import { finished } from './guardrails-kit.js';

// What keeps a power schedule inside what was agreed when it was made: its id never takes another
// schedule's place. Real Redis, the worker, the fake Slack and the simulator over HTTP.

const USERS = [{ id: 'U0ADA', name: 'ada', tz: 'America/New_York' }];

const theirs = (id: string): Schedule => ({
  id,
  action: 'start',
  target: { instance: 'i-theirs', name: 'their-box' },
  when: 'daily 09:00',
  pattern: '0 9 * * *',
  tz: 'UTC',
  channelId: 'C0THEIRS',
  projectId: 'p-theirs',
  ownerId: 'U0THEM',
  createdAt: 1,
});

describe('schedule ids', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B', slack: { users: USERS }, watch: { schedulers: false } });
    await settled(stack, 'create web-01 h100-hgx-80gb.1x', 'Done');
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("never replaces another channel's schedule whose id the new one would get, and uses 12 hex digits", async () => {
    const parsed = parseCommand('schedule stop web-01 daily 07:30 --tz Europe/Berlin');
    if (!parsed.ok) throw new Error(parsed.error.message);
    const ctx: JobContext = {
      teamId: 'T0TEST',
      channelId: CHANNEL,
      userId: 'U0ADA',
      userName: 'ada',
      projectId: stack.sim.info.projectId,
      requestedAt: 1_790_000_000_000,
    };
    // The ids this request's job would be given first (its id's hash, 6 and 12 digits long) already
    // belong to schedules of another channel.
    const jobId = requestJobId(parsed.command, ctx);
    const hash = createHash('sha256').update(jobId).digest('hex');
    const taken = [`s-${hash.slice(0, 6)}`, `s-${hash.slice(0, 12)}`];
    for (const id of taken) expect(await saveSchedule(stack.store, theirs(id))).not.toBe(false);

    const client = new WebClient(BOT_TOKEN, { slackApiUrl: stack.slack.apiUrl, logLevel: LogLevel.ERROR });
    const ports = slackRequestPorts({ client, store: stack.store, log: stack.log });
    await enqueueRequest(
      { queue: stack.queue, store: stack.store, ports, log: stack.log },
      parsed.command,
      ctx,
    );
    await finished(stack, jobId);

    const made = await until(
      'the new schedule',
      async () => (await listSchedules(stack.store, { channelId: CHANNEL }))[0],
    );
    expect(made.id).toMatch(/^s-[0-9a-f]{12}$/);
    expect(taken).not.toContain(made.id);
    for (const id of taken) expect(await getSchedule(stack.store, id)).toEqual(theirs(id));
    expect((await listSchedules(stack.store, { channelId: 'C0THEIRS' })).map((s) => s.id).sort()).toEqual(
      [...taken].sort(),
    );
  });
});
