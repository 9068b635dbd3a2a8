import { answers as approvals } from './approvals/answers.js';
import { answers as audit } from './audit/answers.js';
import { answers as help } from './help/answers.js';
import { answers as jobs } from './jobs/answers.js';
import type { AnswerFor, DirectContext, DirectReply } from './kit/direct.js';
import { answers as projects } from './projects/answers.js';
import type { DirectKind, GpuCommand, GpuCommandKind } from './registry.js';
import { answers as waitlist } from './waitlist/answers.js';
import { answers as watch } from './watch/answers.js';

// Every answer the listener gives itself, gathered from the families. The table's type lists every
// kind whose spec is `direct`, so such a command without an answer does not compile.

export type AnswerTable = { readonly [K in DirectKind]: AnswerFor<K> };

export const ANSWERS: AnswerTable = {
  ...help,
  ...projects,
  ...watch,
  ...jobs,
  ...approvals,
  ...waitlist,
  ...audit,
};

/** The listener's answer to a direct command. */
export function answerDirect(command: GpuCommand, ctx: DirectContext): Promise<DirectReply> {
  type Answer = (command: GpuCommand, ctx: DirectContext) => Promise<DirectReply>;
  const answer = (ANSWERS as Partial<Record<GpuCommandKind, Answer>>)[command.kind];
  if (!answer) throw new Error(`${command.kind} is answered by a job, not by the listener`);
  return answer(command, ctx);
}
