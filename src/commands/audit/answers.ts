import type { Answers } from '../kit/direct.js';
import { auditList } from './render.js';

export const answers = {
  audit: async (command, ctx) => {
    return auditList(await ctx.audit.latest(command.limit), command.limit);
  },
} satisfies Answers;
