import { escapeText } from '../../render/job-message.js';
import { slackDate } from '../../render/slack-date.js';
import { type Answers, sections } from '../kit/direct.js';

export const answers = {
  jobs: async (_command, ctx) => {
    const jobs = await ctx.store.recentJobs(ctx.channelId, 15);
    if (jobs.length === 0) return { text: 'No jobs in this channel yet.' };
    const lines = jobs.map(
      (j) =>
        `• \`${escapeText(j.summary)}\` · *${j.state}* · <@${j.userId}> · ${slackDate(j.createdAt)}${j.detail ? `\n   ${escapeText(j.detail).slice(0, 200)}` : ''}`,
    );
    const text = `*Recent jobs in this channel*\n${lines.join('\n')}`;
    return { text: `Recent jobs: ${jobs.length}`, blocks: sections([text.slice(0, 2900)]) };
  },
} satisfies Answers;
