import { formatDuration } from '../../render/format-duration.js';
import { escapeText } from '../../render/job-message.js';
import { readCatalog } from '../../store/catalog-cache.js';
import { createWaitlist, MAX_WAITLIST_PER_CHANNEL } from '../../store/waitlist.js';
import { type Answers, currentProject, REDIS_MS } from '../kit/direct.js';
import { unknownTypeProblem } from '../kit/reference-problem.js';
import { withDeadline } from '../kit/with-deadline.js';
import { waitlistBlocks } from './render.js';

// `/gpu waitlist …`: answered by the listener from Redis alone; the capacity watcher does the
// looking. docs/watch.md.

const redis = <T>(p: Promise<T>): Promise<T> => withDeadline(p, REDIS_MS, 'Redis');

export const answers = {
  waitlist: async (_command, ctx) =>
    waitlistBlocks(await redis(createWaitlist(ctx.store).list(ctx.channelId))),

  'waitlist.rm': async (command, ctx) => {
    const removed = await redis(createWaitlist(ctx.store).remove(ctx.channelId, command.id));
    return {
      text: removed
        ? `Removed \`${removed.id}\` (${escapeText(removed.type)}) from this channel's waitlist.`
        : `This channel's waitlist has no entry \`${escapeText(command.id)}\`: see \`/gpu waitlist\`.`,
    };
  },

  'waitlist.add': async (command, ctx) => {
    const waitlist = createWaitlist(ctx.store);
    const project = await currentProject(ctx, redis);
    if (!project) {
      return { text: 'This channel has no project yet: run `/gpu project use <name|id>` first.' };
    }
    // A type the cloud does not sell would wait forever: refused as /gpu create refuses it.
    const cached = await redis(readCatalog(ctx.store, project.projectId)).catch(() => undefined);
    const unsold = cached ? unknownTypeProblem(command.type, cached.catalog, ctx.pricing) : undefined;
    if (unsold) return { text: unsold.message };
    const existing = await redis(waitlist.list(ctx.channelId));
    const same = existing.find((e) => e.type === command.type && e.count === command.count);
    if (same) {
      return { text: `This channel already waits for ${escapeText(command.type)} (\`${same.id}\`).` };
    }
    if (existing.length >= MAX_WAITLIST_PER_CHANNEL) {
      return {
        text: `This channel already waits for ${existing.length} types, the most it may: remove one with \`/gpu waitlist rm <id>\` first.`,
      };
    }
    const entry = await redis(
      waitlist.add({
        channelId: ctx.channelId,
        projectId: project.projectId,
        type: command.type,
        count: command.count,
        by: ctx.userId,
        createdAt: Date.now(),
      }),
    );
    const machines = command.count === 1 ? 'a machine' : `${command.count} machines`;
    const when = ctx.routes.listCapacity
      ? `when the cloud lists capacity for ${machines} of *${escapeText(command.type)}*`
      : `when the price list offers *${escapeText(command.type)}* in some region (this cloud does not say how many machines are free, so the count is not checked)`;
    return {
      text: `:hourglass: Added \`${entry.id}\`: this channel is told once ${when} (checked every ${formatDuration(ctx.watch.capacityEverySeconds)}).`,
    };
  },
} satisfies Answers;
