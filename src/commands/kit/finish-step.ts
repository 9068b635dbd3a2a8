import type { WebClient } from '@slack/web-api';
import type { StepRef } from '../../jobs/job-data.js';
import type { Logger } from '../../log/logger.js';
import { describeCommand, type GpuCommand } from '../registry.js';
import { StepOutputError, type StepOutputs } from '../workflow/step-spec.js';
import { stepFor } from '../workflow/steps.js';

// Completes or fails a Workflow Builder step when its job ends (or its approval is denied or expires),
// with the bot's own token: the event's bot_access_token is never kept. A step Slack no longer runs
// (completed already, or gone) is logged, never the job's failure.

/** Slack mrkdwn as plain words: Workflow Builder shows the error as plain text. */
export function plainSentence(text: string): string {
  return text
    .replace(/<[#@!]?([A-Z0-9]+)(?:\|([^>]*))?>/g, (_, id: string, label?: string) => label ?? id)
    .replace(/<([^|>]+)\|([^>]+)>/g, '$2')
    .replace(/:[a-z][a-z0-9_+-]*:\s*/g, '')
    .replace(/[*`]/g, '')
    .replace(/\s+/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .trim();
}

export type StepEnd =
  | { readonly ok: true; readonly data: Readonly<Record<string, unknown>> }
  | { readonly ok: false; readonly error: string };

type Outputs =
  | { readonly ok: true; readonly outputs: StepOutputs }
  | { readonly ok: false; readonly error: string };

/** The outputs of a finished job, or the sentence that fails the step instead. */
export function stepOutputs(step: StepRef, data: Readonly<Record<string, unknown>>): Outputs {
  const spec = stepFor(step.callbackId);
  if (!spec) {
    return {
      ok: false,
      error: `This version of gpuops has no step ${step.callbackId}; remove it from the workflow.`,
    };
  }
  try {
    return { ok: true, outputs: spec.outputsOf(data, step.kept ?? {}) };
  } catch (err) {
    if (err instanceof StepOutputError) return { ok: false, error: err.message };
    throw err;
  }
}

export async function finishStep(
  deps: { readonly slack: WebClient; readonly log: Logger },
  step: StepRef,
  end: StepEnd,
): Promise<void> {
  try {
    if (end.ok) {
      const made = stepOutputs(step, end.data);
      if (made.ok) {
        await deps.slack.functions.completeSuccess({
          function_execution_id: step.executionId,
          outputs: made.outputs,
        });
      } else {
        await deps.slack.functions.completeError({
          function_execution_id: step.executionId,
          error: made.error,
        });
      }
      return;
    }
    await deps.slack.functions.completeError({
      function_execution_id: step.executionId,
      error: plainSentence(end.error).slice(0, 1000),
    });
  } catch (err) {
    deps.log.warn(
      { err, executionId: step.executionId, step: step.callbackId },
      'could not finish a workflow step',
    );
  }
}

/** Why a step whose request waited for an approver ends without running: denied, or no one decided. */
export function undecidedStepError(
  request: string,
  state: 'denied' | 'expired',
  decision?: { readonly by: string; readonly reason?: string | undefined },
): string {
  if (state === 'denied') {
    const reason = decision?.reason ? `: "${decision.reason}"` : '';
    return `${request} was denied by an approver (${decision?.by ?? 'unknown'})${reason}. Nothing was changed; talk to the approvers, then run the workflow again.`;
  }
  return `${request} waited for an approver, and the approval expired before anyone decided. Nothing was changed; run the workflow again when an approver can answer.`;
}

/** A request a workflow step made was denied or expired: the step fails with why. */
export async function failWaitingStep(
  deps: { readonly slack: WebClient; readonly log: Logger },
  request: {
    readonly command: GpuCommand;
    readonly ctx: { readonly step?: StepRef | undefined };
    readonly state: string;
    readonly decision?: { readonly by: string; readonly reason?: string | undefined } | undefined;
  },
): Promise<void> {
  const step = request.ctx.step;
  if (!step || (request.state !== 'denied' && request.state !== 'expired')) return;
  const error = undecidedStepError(describeCommand(request.command), request.state, request.decision);
  await finishStep(deps, step, { ok: false, error });
}
