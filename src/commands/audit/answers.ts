import { auditList } from '../approvals/render.js';
import type { Answers } from '../kit/direct.js';

export const answers = {
  audit: async (command, ctx) => {
    return auditList(await ctx.audit.latest(command.limit), command.limit);
  },
} satisfies Answers;
