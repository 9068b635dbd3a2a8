import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredView } from '../../src/devkit/fake-slack-api.js';
import { homeOf } from '../../src/devkit/slack/home-tabs.js';
import { listSchedules } from '../../src/store/schedules.js';
import { createWaitlist } from '../../src/store/waitlist.js';
import type { BotStack } from '../support/bot-stack.js';
import { SIGNING_SECRET, startBotStack } from '../support/bot-stack.js';
import { type Block, blocksOf, openHome, pressOnHome, published, textOf } from '../support/home-driver.js';
import { pngHeader } from '../support/png.js';
import { eventCallbackBody, postSigned } from '../support/slack-driver.js';
import { settled } from '../support/slash-requests.js';
import { until } from '../support/until.js';
import { CHANNEL, expectCleanSlack } from './answers.js';

// The Home tab end to end: Slack delivers a signed app_home_opened, the bot publishes the person's
// Home (views.publish) from what Redis knows; its buttons come back as signed block_actions and act
// through the same door as `/gpu`, and the watcher re-publishes it when the machines change.

const ADA = 'U0ADA';

/** The button of the Home tab whose section names `name`, by its label. */
function machineButton(view: StoredView, name: string, label: string): { actionId: string; value: string } {
  const blocks = blocksOf(view);
  const at = blocks.findIndex((b) => b.type === 'section' && String(b.text?.text).startsWith(`*${name}*`));
  expect(at, `a section for ${name}`).toBeGreaterThan(-1);
  const row = blocks[at + 1]!;
  const button = row.elements?.find((e) => (e.text as { text: string }).text === label);
  expect(button, `${label} under ${name}`).toBeDefined();
  return { actionId: String(button!.action_id), value: String(button!.value) };
}

describe('the Home tab', () => {
  let stack: BotStack;

  beforeAll(async () => {
    stack = await startBotStack({ watch: { pollEveryMs: 150 } });
    await settled(stack, 'watch on', 'Done').catch(() => undefined);
  }, 30_000);

  afterAll(async () => {
    await stack?.close();
  });

  it('shows what someone has on opening it, and its buttons act through the queue', async () => {
    await stack.command('watch on');
    await settled(stack, 'create home-01 h100-hgx-80gb.1x', 'Done');
    // The watcher must have seen the new machine running.
    await until('the watcher to see home-01', async () => {
      const since = stack.slack.mark();
      await openHome(stack);
      const call = await published(stack, since, () => true);
      return JSON.stringify(call.body.view).includes('home-01* · *running*') ? true : undefined;
    });
    const home = homeOf(stack.slack, ADA)!;
    const text = textOf(home);
    expect(text).toContain('h100-hgx-80gb.1x');
    expect(text).toMatch(/\$[0-9.]+\/h running/);
    expect(text).toContain(`made in <#${CHANNEL}>`);
    expect(text).toContain('Create a machine…');
    expect(blocksOf(home).length).toBeLessThanOrEqual(100);

    // Stop: queued as typed in the machine's channel, where its message shows the job.
    const stop = machineButton(home, 'home-01', 'Stop');
    const since = stack.slack.mark();
    await pressOnHome(stack, stop.actionId, stop.value);
    const answered = await published(stack, since, (t) => t.includes('is queued as job'));
    expect(JSON.stringify(answered.body.view)).toContain(`its progress is in <#${CHANNEL}>`);
    await stack.slack.waitFor(
      'chat.update',
      (c) => c.body.channel === CHANNEL && String(c.body.text).startsWith('Done: /gpu stop home-01'),
      20_000,
      since,
    );
    // The watcher sees it stopped and re-publishes the Home of its owner, who opened it before.
    await published(stack, since, (t) => t.includes('home-01* · *stopped*'), ADA, 20_000);
    expect(machineButton(homeOf(stack.slack, ADA)!, 'home-01', 'Start').actionId).toBe(
      'gpuops.home.run.start',
    );
    expectCleanSlack(stack);
  }, 60_000);

  it('draws this week as a PNG uploaded to Slack and shown as a slack_file image', async () => {
    const since = stack.slack.mark();
    await openHome(stack);
    const call = await published(stack, since, (t) => t.includes('"slack_file"'));
    const view = call.body.view as { blocks: Block[] };
    const image = view.blocks.find((b) => b.type === 'image') as unknown as { slack_file: { id: string } };
    const file = stack.slack.files.get(image.slack_file.id)!;
    expect(file.completed).toBe(true);
    expect(pngHeader(file.bytes!)).toEqual({ width: 640, height: 300 });
    expect(JSON.stringify(view)).toContain('*This week*');
    // Opened again with the same figures: the same picture, not a second upload.
    const uploads = stack.slack.callsTo('files.getUploadURLExternal').length;
    const again = stack.slack.mark();
    await openHome(stack);
    const second = await published(stack, again, () => true);
    expect(JSON.stringify(second.body.view)).toContain(image.slack_file.id);
    expect(stack.slack.callsTo('files.getUploadURLExternal').length).toBe(uploads);
    // Slack refusing the view with its picture (a file it has not processed yet): the Home still
    // goes out, with the figures and without the picture.
    stack.slack.failWith('views.publish', 'invalid_arguments');
    const refused = stack.slack.mark();
    await openHome(stack);
    const without = await published(stack, refused, () => true);
    expect(JSON.stringify(without.body.view)).toContain('*This week*');
    expect(JSON.stringify(without.body.view)).not.toContain('slack_file');
  }, 30_000);

  it('lists waitlist entries and removes one with its button, as /gpu waitlist rm would', async () => {
    // A type nobody sells stays on the list: the capacity watcher never takes it off under the test.
    // (`/gpu waitlist` refuses such a type today; an entry stored before that still shows and goes.)
    await createWaitlist(stack.store).add({
      channelId: CHANNEL,
      projectId: stack.sim.info.projectId,
      type: 'b300-unsold.8x',
      count: 3,
      by: ADA,
      createdAt: Date.now(),
    });
    const [entry] = await until('the waitlist entry', async () => {
      const all = (await createWaitlist(stack.store).all()).filter((e) => e.by === ADA);
      return all.length > 0 ? all : undefined;
    });
    const since = stack.slack.mark();
    await openHome(stack);
    await published(stack, since, (t) => t.includes(entry!.id));
    const section = blocksOf(homeOf(stack.slack, ADA)).find((b) => JSON.stringify(b).includes(entry!.id))!;
    const remove = section.accessory as { action_id: string; value: string };
    const pressed = stack.slack.mark();
    await pressOnHome(stack, remove.action_id, remove.value);
    const after = await published(stack, pressed, (t) => t.includes(`Removed \`${entry!.id}\``));
    expect(JSON.stringify(after.body.view)).toContain('*Your capacity waitlist*\\nNothing');
    expect((await createWaitlist(stack.store).all()).some((e) => e.id === entry!.id)).toBe(false);
    expectCleanSlack(stack);
  }, 30_000);

  it('lists the person’s power schedules and removes one with its button, as /gpu schedule rm would', async () => {
    await settled(stack, 'schedule stop team=ml weekdays 20:00 --tz Europe/Berlin', 'Done');
    const [schedule] = await listSchedules(stack.store, { userId: ADA });
    expect(schedule).toBeDefined();
    const since = stack.slack.mark();
    await openHome(stack);
    await published(stack, since, (t) => t.includes(schedule!.id));
    const section = blocksOf(homeOf(stack.slack, ADA)).find((b) => JSON.stringify(b).includes(schedule!.id))!;
    expect(textOf(homeOf(stack.slack, ADA)!)).toContain('stop *instances tagged team=ml*');
    const remove = section.accessory as { action_id: string; value: string };
    const pressed = stack.slack.mark();
    await pressOnHome(stack, remove.action_id, remove.value);
    // Removing is a request in the schedule's channel, through the queue like the typed command.
    await stack.slack.waitFor(
      'chat.update',
      (c) =>
        c.body.channel === CHANNEL &&
        String(c.body.text).startsWith(`Done: /gpu schedule rm ${schedule!.id}`),
      20_000,
      pressed,
    );
    expect(await listSchedules(stack.store, { userId: ADA })).toEqual([]);
    const reopened = stack.slack.mark();
    await openHome(stack);
    const after = await published(stack, reopened, () => true);
    expect(JSON.stringify(after.body.view)).toContain('No scheduled starts or stops.');
    expectCleanSlack(stack);
  }, 30_000);

  it('opens the create form from its button, for a request made in the person’s DM with the app', async () => {
    const since = stack.slack.mark();
    await openHome(stack);
    await published(stack, since, () => true);
    const button = blocksOf(homeOf(stack.slack, ADA))
      .flatMap((b) => b.elements ?? [])
      .find((e) => (e.text as { text: string }).text === 'Create a machine…')!;
    await pressOnHome(stack, String(button.action_id), String(button.value));
    const opened = await stack.slack.waitFor('views.open', () => true, 5_000, since);
    const view = opened.body.view as { type: string; private_metadata: string; title: { text: string } };
    expect(view.type).toBe('modal');
    expect(JSON.parse(view.private_metadata)).toMatchObject({ form: 'create', channelId: 'D0ADA' });
    expectCleanSlack(stack);
  });

  it('answers the URL check Slack makes when Event Subscriptions is set up', async () => {
    const response = await postSigned(
      stack.url,
      { token: 'legacy-verification-token', challenge: 'c0ffee-challenge', type: 'url_verification' },
      { secret: SIGNING_SECRET },
    );
    expect(response.status).toBe(200);
    expect(response.text).toContain('c0ffee-challenge');
  });

  it('ignores the Messages tab: only the Home tab is drawn', async () => {
    const since = stack.slack.mark();
    const response = await postSigned(
      stack.url,
      eventCallbackBody({ type: 'app_home_opened', user: 'U0BOB', channel: 'D0BOB', tab: 'messages' }),
      { secret: SIGNING_SECRET },
    );
    expect(response.status).toBe(200);
    // A Home opened afterwards is published: the messages-tab event before it published nothing.
    await openHome(stack, 'U0BOB', 'D0BOB');
    await published(stack, since, () => true, 'U0BOB');
    expect(
      stack.slack.callsTo('views.publish').filter((c) => c.body.user_id === 'U0BOB' && c.index >= since),
    ).toHaveLength(1);
  }, 30_000);
});
