import { expect } from 'vitest';
import { APPROVE_ACTION } from '../../../src/commands/approvals/render.js';
import type { StoredMessage } from '../../../src/devkit/fake-slack-api.js';
import { blockActionsPayload, interactionBody, postSigned } from '../../support/slack-driver.js';
import { until } from '../../support/until.js';
import { FINAL, type Rig, type Sent, SIGNING_SECRET, slash, TYPE } from './reliability-rig.js';

// Requests that need an approval, sent and approved through a Redis outage, and the promise checked
// after it (docs/reliability.md, "One lifecycle per request"): every request sent for approval ends
// in exactly one final answer (run, or not run with why), none twice, and nothing is made that was
// not accepted.

export const APPROVALS = 'C0APPROVE';
export const APPROVER = 'U0APPROVER';

/** Every create needs an approval; the approver is one person. */
export const APPROVAL_POLICY = `rate_limits:
  per_user: { requests: 0 }
  per_channel: { requests: 0 }
approvals:
  threshold_per_hour: 1
  approvers: { users: [${APPROVER}] }
  channel: ${APPROVALS}
  expires_after: 1h
`;

export interface Asked {
  readonly name: string;
  readonly sent: Sent;
  /** What the listener answered at once. */
  readonly answer: string;
  readonly sentForApproval: boolean;
}

/** `/gpu create <name>` from its own person and channel. */
export async function askCreate(rig: Rig, url: string, name: string, lane: number): Promise<Asked> {
  const sent = await slash(rig, url, `create ${name} ${TYPE}`, {
    channelId: `C0AP${lane}`,
    userId: `U0AP${lane}X${name.length}`,
  });
  expect(sent.response.status).toBe(200);
  expect(sent.response.elapsedMs, `"/gpu create ${name}" answered within 3 s`).toBeLessThan(3_000);
  const answer = sent.response.text === '' ? '' : String((sent.response.json() as { text?: string }).text);
  return { name, sent, answer, sentForApproval: answer.includes('needs an approval') };
}

/** The approval card of a request, once posted. */
export async function cardOf(
  rig: Rig,
  asked: Asked,
): Promise<{ ts: string; approvalId: string; message: StoredMessage }> {
  const posted = await rig.slack.waitFor(
    'chat.postMessage',
    (c) => c.body.channel === APPROVALS && String(c.body.text).includes(`create ${asked.name} `),
    30_000,
    asked.sent.since,
  );
  const ts = String((posted.response as { ts: string }).ts);
  const message = rig.slack.message(APPROVALS, ts)!;
  const approve = JSON.stringify(message.blocks).match(
    /"action_id":"gpuops\.approval\.approve"[^}]*?"value":"([^"]+)"/,
  );
  const approvalId =
    approve?.[1] ?? String(JSON.stringify(message.blocks).match(/"value":"(apr-[^"]+)"/)?.[1]);
  return { ts, approvalId, message };
}

/** The requester's own message ("Waiting for approval in …"), which the decision and the job edit. */
export async function requesterMessageOf(rig: Rig, asked: Asked): Promise<string> {
  const posted = await rig.slack.waitFor(
    'chat.postMessage',
    (c) =>
      c.body.channel === asked.sent.channelId &&
      String(c.body.text).startsWith('Waiting for approval') &&
      String(c.body.text).includes(`create ${asked.name} `),
    30_000,
    asked.sent.since,
  );
  return String((posted.response as { ts: string }).ts);
}

/**
 * The approver clicks Approve until the click is taken (the requester's message says "Approved" or a
 * final answer): a click met by the failover is answered "cannot reach its store … try again", and the
 * approver does.
 */
export async function approveUntilTaken(rig: Rig, url: string, asked: Asked): Promise<void> {
  const card = await cardOf(rig, asked);
  const mine = await requesterMessageOf(rig, asked);
  const taken = () => {
    const text = String(rig.slack.message(asked.sent.channelId, mine)?.text);
    return /^Approved by/.test(text) || FINAL.test(text) || /^Not run/.test(text) ? true : undefined;
  };
  await until(
    `the approval of "/gpu create ${asked.name}" to be taken`,
    async () => {
      if (taken()) return true;
      await postSigned(
        url,
        interactionBody(
          blockActionsPayload({
            actionId: APPROVE_ACTION,
            value: card.approvalId,
            text: 'Approve',
            userId: APPROVER,
            userName: 'approver',
            channelId: APPROVALS,
            message: { ts: card.ts, text: card.message.text ?? '', blocks: card.message.blocks ?? [] },
          }),
        ),
        { secret: SIGNING_SECRET },
      ).catch(() => undefined);
      return taken();
    },
    60_000,
    500,
  );
}

/** Each request sent for approval ends in exactly one final answer, last; none was made twice. */
export async function checkApprovedAnswers(
  rig: Rig,
  asked: readonly Asked[],
  timeoutMs: number,
): Promise<{ ran: number; notRun: number; heldFirst: number }> {
  let ran = 0;
  let notRun = 0;
  let heldFirst = 0;
  for (const a of asked.filter((x) => x.sentForApproval)) {
    const ts = await requesterMessageOf(rig, a);
    const final = await until(
      `"/gpu create ${a.name}" to end in a final answer`,
      () => {
        const m = rig.slack.message(a.sent.channelId, ts);
        return m && (FINAL.test(String(m.text)) || /^Not run/.test(String(m.text))) ? m : undefined;
      },
      timeoutMs,
      100,
    );
    const finals = final.history.filter((v) => FINAL.test(String(v.text)) || /^Not run/.test(String(v.text)));
    expect(finals, `"/gpu create ${a.name}": one final answer`).toHaveLength(1);
    expect(finals[0], `"/gpu create ${a.name}": the final answer is the last`).toBe(final.history.at(-1));
    expect(
      final.history.some(
        (v) => /Queued/.test(JSON.stringify(v.blocks)) && /Not run/.test(String(final.text)),
      ),
    ).toBe(false);
    if (
      /will run once gpuops can store the job on two servers/.test(
        JSON.stringify(final.history.map((v) => v.blocks)),
      )
    ) {
      heldFirst++;
    }
    const made = rig.sim.control.createCount('createInstance', a.name);
    if (/^Done:/.test(String(final.text))) {
      ran++;
      expect(made, `"/gpu create ${a.name}" made one machine`).toBe(1);
    } else {
      notRun++;
      expect(made, `"/gpu create ${a.name}" not run, so no machine`).toBeLessThanOrEqual(
        /^Failed:/.test(String(final.text)) ? 1 : 0,
      );
    }
  }
  return { ran, notRun, heldFirst };
}
