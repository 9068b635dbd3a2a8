import type { ApprovalRequest } from '../../store/approvals.js';

// What an approved request's messages say about its job, by its stage (docs/reliability.md): nobody
// reads "Queued" before the job is on the queue.

/** Why an approved job is not on the queue yet, when the attempt to store it said so. */
export type QueuingNote = 'no-replica';

/** Tells the date in Slack's own format (render.ts slackDate), passed in to keep this file a leaf. */
type DateText = (ms: number) => string;

/** The sentence after "Approved by …" on the requester's message. */
export function approvedTail(request: ApprovalRequest, date: DateText, note?: QueuingNote): string {
  switch (request.stage) {
    case 'lapsed':
      return ` gpuops could not store its job on two servers by ${date(request.runBy ?? 0)}, so nothing was done; ask again if it is still needed.`;
    case 'queuing':
      return note === 'no-replica'
        ? ` It will run once gpuops can store the job on two servers: Redis has no replica right now.${until(request, date)} You will see it start here.`
        : ' It starts as soon as its job is stored.';
    default:
      return ' Queued: it starts in a moment.';
  }
}

/** The line the approvers' card gets under the decision, or none. */
export function approvedCardLine(
  request: ApprovalRequest,
  date: DateText,
  note?: QueuingNote,
): string | undefined {
  if (request.state !== 'approved') return undefined;
  switch (request.stage) {
    case 'lapsed':
      return `:x: *Not run*: gpuops could not store its job on two servers by ${date(request.runBy ?? 0)}. The requester was told; nothing was done.`;
    case 'queuing':
      return note === 'no-replica'
        ? `:hourglass_flowing_sand: *Waiting to run*: it will run once gpuops can store the job on two servers (Redis has no replica right now).${until(request, date)}`
        : undefined;
    default:
      return ':arrow_forward: *Queued*';
  }
}

function until(request: ApprovalRequest, date: DateText): string {
  return request.runBy
    ? ` If it cannot by ${date(request.runBy)}, it is dropped and the requester told.`
    : '';
}
