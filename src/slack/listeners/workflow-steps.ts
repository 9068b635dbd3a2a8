import type { App } from '@slack/bolt';
import { unavailableIn } from '../../commands/availability.js';
import { plainSentence } from '../../commands/kit/finish-step.js';
import { deliveryOf } from '../../commands/registry.js';
import { readStepInputs } from '../../commands/workflow/read-step-inputs.js';
import { CHANNEL_INPUT, type StepSpec } from '../../commands/workflow/step-spec.js';
import { STEPS } from '../../commands/workflow/steps.js';
import { type JobContext, type StepRef, stepRefSchema } from '../../jobs/job-data.js';
import { MaybeQueuedError } from '../../jobs/replicated.js';
import { acceptRequest } from '../../requests/accept-request.js';
import { callerRefusal } from '../access-gate.js';
import type { SlackDeps } from '../slack-deps.js';
import { SIGNATURE_WINDOW_SECONDS } from '../trigger-replays.js';

// Workflow Builder custom steps (`function_executed` events, docs/workflows.md). Bolt acknowledges the
// event at once; the step then goes through the same door as /gpu: inputs checked, the policy for the
// step's person (the one Slack fills in as having used the workflow, never a typed input; a role granted
// to the step's channel does not count), an approval when needed, one job, the audit trail. The job completes or fails the step
// when it ends; only a step that never became a job is failed here, with one sentence.

export const STEP_NOT_QUEUED =
  'gpuops could not reach its queue, so nothing was started. Run the workflow again in a minute.';
export const STEP_MAYBE_QUEUED =
  'Redis failed over while gpuops was storing this step, so it may or may not run. Check /gpu jobs before running the workflow again.';

interface FunctionEvent {
  readonly function_execution_id: string;
  readonly workflow_execution_id?: string;
  readonly inputs?: Record<string, unknown>;
}

/** What became of the step: undefined once it is a job or waits for an approver, else why it failed. */
async function acceptStep(
  step: StepSpec,
  event: FunctionEvent,
  teamId: string,
  deps: SlackDeps,
): Promise<string | undefined> {
  const read = readStepInputs(step, event.inputs);
  if (!read.ok) return read.message;
  const { command, inputs, person: userId } = read;
  const missing = unavailableIn(command, deps.shape, deps.routes);
  if (missing) return plainSentence(missing);
  // The person must be someone who may use gpuops at all (not a guest, not another workspace, not
  // deactivated), read from Slack whatever the policy allows.
  const outsider = await callerRefusal(deps, deps.botTeamId, { userId, teamId, kind: 'step' }, true);
  if (outsider !== undefined) return `gpuops refused this step: ${plainSentence(outsider)}`;
  const channel = typeof inputs[CHANNEL_INPUT] === 'string' ? inputs[CHANNEL_INPUT] : undefined;
  const binding = channel ? await deps.store.projectOf(channel) : undefined;
  const projectId = binding?.projectId ?? deps.defaultProjectId;
  const kept = Object.fromEntries(
    (step.keeps ?? []).flatMap((name) => {
      const value = inputs[name];
      // Kept with the job for the outputs only: a long text is cut, it only has to match a name.
      return value === undefined ? [] : [[name, typeof value === 'string' ? value.slice(0, 200) : value]];
    }),
  );
  const workflowRun = stepRefSchema.shape.workflowExecutionId.safeParse(event.workflow_execution_id).data;
  const ref: StepRef = {
    executionId: event.function_execution_id,
    ...(workflowRun !== undefined ? { workflowExecutionId: workflowRun } : {}),
    callbackId: step.callbackId,
    quiet: channel === undefined || deliveryOf(command.kind) !== 'channel',
    ...(Object.keys(kept).length > 0 ? { kept } : {}),
  };
  const ctx: JobContext = {
    teamId,
    // Without a channel the person's own id stands in (a step's channel lends no role either way).
    channelId: channel ?? userId,
    userId,
    ...(projectId ? { projectId } : {}),
    requestedAt: Date.now(),
    step: ref,
  };
  deps.onCommand?.(command.kind);
  // The same event sent again (Slack's retry, or a captured delivery replayed after the 30 s dedupe,
  // within the signature window) starts nothing: the run's execution id is claimed with the request.
  const result = await acceptRequest(deps, command, ctx, {
    trigger: { id: `step-${event.function_execution_id}`, seconds: SIGNATURE_WINDOW_SECONDS },
  });
  if (result.status === 'refused') return `gpuops refused this step: ${result.plain}`;
  if (result.status === 'rejected') return `gpuops refused this step: ${result.plain}`;
  return undefined;
}

export function registerWorkflowSteps(app: App, deps: SlackDeps): void {
  for (const step of STEPS) {
    app.function(step.callbackId, async ({ event, body, fail }) => {
      const teamId = (body as { team_id?: string }).team_id ?? 'unknown';
      const problem = await acceptStep(step, event as unknown as FunctionEvent, teamId, deps).catch(
        (err: unknown) => {
          deps.log.error({ err, step: step.callbackId }, 'could not accept a workflow step');
          return err instanceof MaybeQueuedError ? STEP_MAYBE_QUEUED : STEP_NOT_QUEUED;
        },
      );
      if (problem === undefined) return;
      await fail({ error: problem }).catch((err: unknown) =>
        deps.log.warn({ err, step: step.callbackId }, 'could not fail a workflow step'),
      );
    });
  }
}
