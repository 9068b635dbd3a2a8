import { escapeText } from '../../render/job-message.js';
import type { Answers } from '../kit/direct.js';

export const answers = {
  project: async (_command, ctx) => {
    const binding = await ctx.store.projectOf(ctx.channelId);
    if (binding) {
      const name = binding.name ? `${escapeText(binding.name)} ` : '';
      return {
        text: `This channel works in project ${name}\`${binding.projectId}\` (set by <@${binding.boundBy}>).`,
      };
    }
    if (ctx.defaultProjectId) {
      return {
        text: `This channel uses the default project \`${ctx.defaultProjectId}\`. Change it with \`/gpu project use <name|id>\`.`,
      };
    }
    return { text: 'This channel has no project yet: run `/gpu project use <name|id>`.' };
  },
} satisfies Answers;
