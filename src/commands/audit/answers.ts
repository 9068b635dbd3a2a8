import { auditList } from '../approvals/render.js';
import type { Answers } from '../kit/direct.js';

export const answers = {
  audit: async (command, ctx) => {
    if (!ctx.audit) return { text: 'The audit trail is off in this gpuops (no guardrails configured).' };
    return auditList(await ctx.audit.latest(command.limit), command.limit);
  },
} satisfies Answers;
