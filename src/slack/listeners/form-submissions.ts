import type { App, ViewOutput, ViewResponseAction, ViewSubmitAction } from '@slack/bolt';
import { TYPE_BLOCK, TYPE_OTHER_BLOCK } from '../../commands/forms/catalog-blocks.js';
import { type FormContext, type FormSecrets, filesystemFieldFor } from '../../commands/forms/form-kit.js';
import {
  CALLBACK_PREFIX,
  decodeModalMetadata,
  FormMetadataError,
  type ModalMetadata,
} from '../../commands/forms/modal-metadata.js';
import { withDeadline } from '../../commands/kit/with-deadline.js';
import { readForm } from '../../commands/read-form.js';
import { formSpecOf } from '../../commands/registry.js';
import type { JobContext, SealedInputs } from '../../jobs/job-data.js';
import { acceptRequest } from '../../requests/accept-request.js';
import { isRedisFull, REDIS_FULL } from '../../store/redis-full.js';
import { tellPrivately } from '../response-url.js';
import type { SlackDeps } from '../slack-deps.js';
import { SIGNATURE_WINDOW_SECONDS } from '../trigger-replays.js';
import { REDIS_DOWN } from './gpu-command.js';

// Submit on a form: read the fields into the same typed command `/gpu …` text would give, answer bad
// fields on the field (`response_action: errors`, the form stays open), seal any secret, and queue the
// job like a typed command, its message going to the channel the form was opened from.

type Errors = Record<string, string>;

class SubmitProblem extends Error {}

/** Input blocks of the submitted view; errors may only name these. */
function inputBlocks(view: ViewOutput): string[] {
  return view.blocks.flatMap((b) =>
    b.type === 'input' && typeof (b as { block_id?: unknown }).block_id === 'string'
      ? [(b as { block_id: string }).block_id]
      : [],
  );
}

/** Keeps each error on its block when the view has it, else moves it onto `fallback`. */
function placed(errors: Errors, view: ViewOutput, fallback: string): Errors {
  const present = inputBlocks(view);
  if (present.length === 0) return errors;
  const target = present.includes(fallback) ? fallback : present[0]!;
  const out: Errors = {};
  for (const [block, message] of Object.entries(errors)) {
    const at = present.includes(block) ? block : target;
    out[at] = out[at] ? `${out[at]} ${message}` : message;
  }
  return out;
}

async function seal(deps: SlackDeps, secrets: FormSecrets): Promise<SealedInputs | undefined> {
  const entries = Object.entries(secrets).filter(
    (e): e is [keyof SealedInputs, string] => e[1] !== undefined,
  );
  if (entries.length === 0) return undefined;
  const sealer = deps.sealer;
  if (!sealer) {
    throw new SubmitProblem(
      'This gpuops cannot keep secrets (no sealing key is configured); ask an operator.',
    );
  }
  const sealed: { -readonly [K in keyof SealedInputs]: SealedInputs[K] } = {};
  for (const [field, text] of entries) sealed[field] = await withDeadline(sealer.seal(text), 1_500, 'Redis');
  return sealed;
}

async function discard(deps: SlackDeps, sealed: SealedInputs | undefined): Promise<void> {
  for (const ref of Object.values(sealed ?? {})) {
    if (ref) await deps.sealer?.discard(ref).catch(() => {});
  }
}

/** What to answer Slack, and what to do once it is answered (the posts, within no deadline). */
interface Submitted {
  readonly response?: ViewResponseAction;
  readonly after?: () => Promise<void>;
}

async function submit(deps: SlackDeps, body: ViewSubmitAction): Promise<Submitted> {
  const response = await answer(deps, body);
  if (response === undefined) return {};
  return 'after' in response ? (response as Submitted) : { response: response as ViewResponseAction };
}

/** Tells the requester privately, where the form was opened from (response_url), else an ephemeral. */
function tellRequester(deps: SlackDeps, ctx: JobContext, text: string): Promise<void> {
  return tellPrivately(deps, ctx, text, 'could not tell the requester where their request went');
}

async function answer(
  deps: SlackDeps,
  body: ViewSubmitAction,
): Promise<ViewResponseAction | Submitted | undefined> {
  const { view } = body;
  let metadata: ModalMetadata;
  try {
    metadata = decodeModalMetadata(view.private_metadata);
  } catch (err) {
    if (!(err instanceof FormMetadataError)) throw err;
    const first = inputBlocks(view)[0];
    return first ? { response_action: 'errors', errors: { [first]: err.message } } : undefined;
  }
  const spec = formSpecOf(metadata.form);
  const ctx: FormContext = {
    metadata,
    shape: deps.shape,
    routes: deps.routes,
    filesystems: filesystemFieldFor((op) => deps.routes[op] !== undefined),
    now: Date.now(),
  };
  const read = readForm(metadata.form, view.state.values, ctx);
  if (!read.ok) {
    return { response_action: 'errors', errors: placed({ ...read.errors }, view, spec.firstBlock) };
  }
  let sealed: SealedInputs | undefined;
  try {
    sealed = await seal(deps, read.secrets);
    const requestCtx: JobContext = {
      teamId: body.team?.id ?? body.user.team_id ?? view.team_id,
      channelId: metadata.channelId,
      // The form was opened by typing or clicking in this channel (Slack's payload then, kept in the
      // form's private_metadata, which only gpuops writes); from the Home tab it is the app's DM.
      madeIn: metadata.channelId,
      userId: body.user.id,
      ...(body.user.name ? { userName: body.user.name } : {}),
      ...(metadata.projectId ? { projectId: metadata.projectId } : {}),
      ...(metadata.responseUrl ? { responseUrl: metadata.responseUrl } : {}),
      requestedAt: Date.now(),
    };
    // A captured submission sent again within Slack's signature window starts nothing: each
    // submission has a trigger id of its own, claimed with the request as a typed command's is.
    const result = await acceptRequest(deps, read.command, requestCtx, {
      ...(sealed ? { sealed } : {}),
      deferPosts: true,
      ...(body.trigger_id ? { trigger: { id: body.trigger_id, seconds: SIGNATURE_WINDOW_SECONDS } } : {}),
    });
    // The same request is already queued: it keeps its own sealed values, these are not needed.
    if (result.status === 'duplicate') await discard(deps, sealed);
    if (result.status === 'refused') {
      // On the form itself (plain text there), which stays open: nothing in it can fix a role.
      await discard(deps, sealed);
      return {
        response_action: 'errors',
        errors: placed({ [spec.firstBlock]: result.plain }, view, spec.firstBlock),
      };
    }
    if (result.status === 'rejected') {
      // On the field it is about (the type typed in, or picked from an old list); the form stays open.
      await discard(deps, sealed);
      const typed = Object.values(view.state.values[TYPE_OTHER_BLOCK] ?? {}).some((v) => Boolean(v.value));
      const block = result.field === 'type' ? (typed ? TYPE_OTHER_BLOCK : TYPE_BLOCK) : spec.firstBlock;
      return { response_action: 'errors', errors: placed({ [block]: result.plain }, view, spec.firstBlock) };
    }
    // The form closes at once; the posts follow the acknowledgement.
    if (result.status === 'pending-approval') {
      // Its sealed values wait with the request. The requester learns where it went.
      const { followUp, notice } = result;
      return {
        after: async () => {
          const corrected = await followUp?.();
          await tellRequester(deps, requestCtx, corrected ?? notice);
        },
      };
    }
    if (result.status === 'queued' && result.followUp) {
      const { followUp } = result;
      return {
        after: async () => {
          const note = await followUp();
          if (note) await tellRequester(deps, requestCtx, note);
        },
      };
    }
    return undefined;
  } catch (err) {
    await discard(deps, sealed);
    const message = err instanceof SubmitProblem ? err.message : isRedisFull(err) ? REDIS_FULL : REDIS_DOWN;
    if (!(err instanceof SubmitProblem))
      deps.log.error({ err, form: metadata.form }, 'could not accept a form');
    return {
      response_action: 'errors',
      errors: placed({ [spec.firstBlock]: message }, view, spec.firstBlock),
    };
  }
}

export function registerFormSubmissions(app: App, deps: SlackDeps): void {
  app.view<ViewSubmitAction>(
    { callback_id: new RegExp(`^${CALLBACK_PREFIX.replaceAll('.', '\\.')}`), type: 'view_submission' },
    async ({ ack, body }) => {
      const { response, after } = await submit(deps, body).catch((err: unknown): Submitted => {
        deps.log.error({ err }, 'could not handle a form submission');
        const first = inputBlocks(body.view)[0];
        return first
          ? {
              response: {
                response_action: 'errors',
                errors: { [first]: 'Something unexpected went wrong; it was logged.' },
              },
            }
          : {};
      });
      await ack(response);
      await after?.().catch((err: unknown) => deps.log.warn({ err }, 'could not finish a form submission'));
    },
  );
}
