import { formatDuration } from '../../render/format-duration.js';
import { escapeText } from '../../render/job-message.js';
import { slackDate } from '../../render/slack-date.js';
import { type ChannelWatch, createWatchSubscriptions } from '../../store/watch-subscriptions.js';
import {
  type Answers,
  currentProject,
  type DirectContext,
  type DirectReply,
  REDIS_MS,
  type WatchSettings,
} from '../kit/direct.js';
import { withDeadline } from '../kit/with-deadline.js';
import type { CommandOf } from '../registry.js';

// `/gpu watch [on|off]`: answered by the listener from Redis alone (the watchers' jobs do the
// looking). docs/watch.md.

const redis = <T>(p: Promise<T>): Promise<T> => withDeadline(p, REDIS_MS, 'Redis');

export function projectLabel(w: Pick<ChannelWatch, 'projectId' | 'projectName'>): string {
  return w.projectName ? `*${escapeText(w.projectName)}* (\`${w.projectId}\`)` : `\`${w.projectId}\``;
}

/** What watching posts, in the policy's terms. */
function watchingSays(settings: WatchSettings): string {
  const digest = settings.digest.enabled
    ? `a daily digest (\`${settings.digest.cron}\`, ${escapeText(settings.digest.tz)})`
    : 'no daily digest (turned off in the policy)';
  return (
    `Changes to its instances (state, IP), Kubernetes and Slurm clusters and node pools show up here within about ${formatDuration(settings.pollEverySeconds)}: ` +
    'one message per resource, edited in place, with a thread reply for each change. ' +
    `GPUs idle below ${settings.idleThresholdPercent}% for ${formatDuration(settings.idleWindowSeconds)} are reported here and to their owner, and ${digest} comes here.`
  );
}

async function answerWatch(command: CommandOf<'watch'>, ctx: DirectContext): Promise<DirectReply> {
  const subscriptions = createWatchSubscriptions(ctx.store);
  const { channelId } = ctx;
  const current = await redis(subscriptions.watchOf(channelId));
  const settings = ctx.watch;
  if (command.state === undefined) {
    if (!current) {
      return { text: 'This channel watches nothing. `/gpu watch on` follows the project it works in.' };
    }
    const project = await currentProject(ctx, redis);
    const moved =
      project && project.projectId !== current.projectId
        ? ` This channel now works in \`${project.projectId}\`: \`/gpu watch on\` follows that one instead.`
        : '';
    return {
      text: `This channel watches project ${projectLabel(current)} since ${slackDate(current.since)} (turned on by <@${current.by}>). ${watchingSays(settings)} \`/gpu watch off\` stops it.${moved}`,
    };
  }
  if (command.state === 'off') {
    const previous = await redis(subscriptions.unwatch(channelId));
    return {
      text: previous
        ? `This channel stopped watching project ${projectLabel(previous)}. Messages already posted stay as they are.`
        : 'This channel was not watching anything.',
    };
  }
  const project = await currentProject(ctx, redis);
  if (!project) {
    return {
      text: 'This channel has no project yet: run `/gpu project use <name|id>` first, then `/gpu watch on`.',
    };
  }
  if (current && current.projectId === project.projectId) {
    return {
      text: `This channel already watches project ${projectLabel(current)}. ${watchingSays(settings)}`,
    };
  }
  await redis(
    subscriptions.watch({
      channelId,
      projectId: project.projectId,
      ...(project.projectName ? { projectName: project.projectName } : {}),
      by: ctx.userId,
      since: Date.now(),
    }),
  );
  const was = current ? ` (instead of ${projectLabel(current)})` : '';
  return {
    text:
      `:eyes: This channel now watches project ${projectLabel(project)}${was}. ${watchingSays(settings)} ` +
      'The first look only records how things are, so nothing is posted until something changes. `/gpu watch off` stops it.',
  };
}

export const answers = { watch: answerWatch } satisfies Answers;
