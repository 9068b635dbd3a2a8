import type { Answers } from '../kit/direct.js';
import { pendingList } from './render.js';

export const answers = {
  /** What this person may decide, with the buttons, and how many of theirs wait. */
  approvals: async (_command, ctx) => {
    const { mine, own } = await ctx.approvalsFor(ctx.userId);
    return pendingList(mine, { own });
  },
} satisfies Answers;
