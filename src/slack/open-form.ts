import { catalogFailedView } from '../commands/forms/catalog-blocks.js';
import { type FormContext, filesystemFieldFor, formModal, section } from '../commands/forms/form-kit.js';
import { encodeModalMetadata, type FormKind, type ModalMetadata } from '../commands/forms/modal-metadata.js';
import { type Deadline, isDeadlinePassed } from '../commands/kit/deadline.js';
import { withDeadline } from '../commands/kit/with-deadline.js';
import { docFor, formFor, formSpecOf } from '../commands/registry.js';
import type { CatalogRefreshData } from '../jobs/job-data.js';
import { jobIdFor } from '../jobs/queue.js';
import { addSystemJob } from '../jobs/system-jobs.js';
import type { Refused } from '../requests/accept-request.js';
import { CATALOG_STALE_MS, readCatalog } from '../store/catalog-cache.js';
import { ACCESS_TOO_SLOW, CHECK_RESERVE_MS } from './request-deadline.js';
import type { SlackDeps } from './slack-deps.js';

// Opening a form inside the interaction: Slack's trigger id lives three seconds, so everything here
// comes from Redis (the project binding, the cached catalogue, the requester's keys), never the cloud.
// Without a cached catalogue the form opens in its loading state and a `catalog.refresh` job fills it.

export interface OpenFormRequest {
  readonly form: FormKind;
  readonly prefill: Pick<ModalMetadata, 'cluster' | 'username' | 'sudo' | 'type'>;
  readonly triggerId: string;
  readonly channelId: string;
  readonly userId: string;
  readonly responseUrl?: string | undefined;
  /** The request's deadline (src/slack/request-deadline.ts): the form opens well before it. */
  readonly deadline?: Deadline | undefined;
}

export type OpenFormResult =
  | { readonly ok: true; readonly viewId: string }
  | { readonly ok: false; readonly text: string };

const REDIS_MS = 1_000;

/** The form's context from what the listener may read: Redis and the route table. */
async function contextFor(deps: SlackDeps, request: OpenFormRequest, now: number): Promise<FormContext> {
  const { store } = deps;
  const binding = await withDeadline(store.projectOf(request.channelId), REDIS_MS, 'Redis');
  const projectId = binding?.projectId ?? deps.defaultProjectId;
  const metadata: ModalMetadata = {
    v: 1,
    form: request.form,
    channelId: request.channelId,
    ...(projectId ? { projectId } : {}),
    ...(request.responseUrl ? { responseUrl: request.responseUrl } : {}),
    ...request.prefill,
  };
  const spec = formSpecOf(request.form);
  const [catalog, keys] = await Promise.all([
    spec.needsCatalog ? withDeadline(readCatalog(store, projectId), REDIS_MS, 'Redis') : undefined,
    spec.needsOwnKeys ? withDeadline(store.keysOf(request.userId), REDIS_MS, 'Redis') : undefined,
  ]);
  return {
    metadata,
    shape: deps.shape,
    routes: deps.routes,
    filesystems: filesystemFieldFor((op) => deps.routes[op] !== undefined),
    catalog,
    ownedKeys: keys?.map((k) => k.name),
    now,
  };
}

/** Asks for fresh catalogue data: for a form waiting in its loading state, or in the background. */
async function requestRefresh(
  deps: SlackDeps,
  ctx: FormContext,
  view: { id: string; hash?: string | undefined } | undefined,
): Promise<void> {
  const projectId = ctx.metadata.projectId;
  const data: CatalogRefreshData = {
    v: 1,
    system: 'catalog.refresh',
    ...(projectId ? { projectId } : {}),
    ...(view
      ? {
          view: {
            id: view.id,
            ...(view.hash ? { hash: view.hash } : {}),
            metadata: encodeModalMetadata(ctx.metadata),
          },
        }
      : {}),
  };
  // One background refresh per project a minute, however many forms open meanwhile.
  const jobId = view
    ? `catalog-view-${jobIdFor(view.id, view.hash ?? '')}`
    : `catalog-${jobIdFor(projectId ?? 'none')}-${Math.floor(ctx.now / 60_000)}`;
  await withDeadline(addSystemJob(deps.queue, data, jobId), REDIS_MS, 'the queue');
}

function slackError(err: unknown): string {
  return (err as { data?: { error?: string } }).data?.error ?? 'no answer';
}

/**
 * How long preparing a form (Redis reads, the access check) may take before a "preparing" view opens
 * in its place: Slack's trigger id lives 3 s from the click, and part of that is already spent on the
 * way here. The view is then filled in with views.update, or says why it cannot be.
 */
export const OPEN_BUDGET_MS = 500;

/** The preparing form opens at least this long before the request's access look-ups give up. */
const OPEN_BEFORE_CHECKS_END_MS = 250;

type Settled<T> = { readonly done: true; readonly value: T } | { readonly done: false };

/** The promise's value if it settles within `ms` (a rejection within it is thrown), else not done. */
async function settledWithin<T>(promise: Promise<T>, ms: number): Promise<Settled<T>> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Settled<T>>((resolve) => {
    timer = setTimeout(() => resolve({ done: false }), ms);
  });
  try {
    return await Promise.race([promise.then((value): Settled<T> => ({ done: true, value })), late]);
  } finally {
    clearTimeout(timer);
  }
}

function failedToOpen(request: OpenFormRequest, err: unknown): OpenFormResult {
  return {
    ok: false,
    text: `I could not open the form (Slack said "${slackError(err)}"). Try again, or give the arguments instead: \`${docFor(request.form).usage}\`.`,
  };
}

/**
 * Opens a form for the person who typed or clicked; never calls the cloud. `access` is the access
 * check already under way: a refusal in time answers instead of a form; a late one replaces the
 * form's content (and the submission is checked again anyway).
 */
export async function openForm(
  deps: SlackDeps,
  request: OpenFormRequest,
  access?: Promise<Refused | undefined>,
): Promise<OpenFormResult> {
  const now = Date.now();
  const spec = formSpecOf(request.form);
  const preparing = Promise.all([contextFor(deps, request, now), access ?? Promise.resolve(undefined)]);
  preparing.catch(() => {}); // awaited below, in either branch
  // What the steps before this (the access gate) took is already gone from the trigger's 3 s; the
  // form opens a little before the access look-ups give up, so a late check is shown in it.
  const budget = request.deadline
    ? Math.min(OPEN_BUDGET_MS, request.deadline.left(CHECK_RESERVE_MS + OPEN_BEFORE_CHECKS_END_MS))
    : OPEN_BUDGET_MS;
  const quick = await settledWithin(preparing, budget);
  if (quick.done) {
    const [ctx, refused] = quick.value;
    if (refused) return { ok: false, text: refused.message };
    let opened: { id?: string; hash?: string } | undefined;
    try {
      opened = (await deps.client.views.open({ trigger_id: request.triggerId, view: spec.view(ctx) })).view;
    } catch (err) {
      deps.log.warn({ err, form: request.form }, 'could not open a form');
      return failedToOpen(request, err);
    }
    await afterOpen(deps, spec, ctx, now, opened);
    return { ok: true, viewId: opened?.id ?? '' };
  }

  // Slow Redis or Slack: open the form now, in a preparing state, before the trigger id expires.
  const placeholder: ModalMetadata = { v: 1, form: request.form, channelId: request.channelId };
  let opened: { id?: string; hash?: string } | undefined;
  try {
    opened = (
      await deps.client.views.open({
        trigger_id: request.triggerId,
        view: formModal(
          spec,
          placeholder,
          [section(':hourglass_flowing_sand: *Preparing the form…*')],
          undefined,
        ),
      })
    ).view;
  } catch (err) {
    deps.log.warn({ err, form: request.form }, 'could not open a form');
    return failedToOpen(request, err);
  }
  const viewId = opened?.id ?? '';
  const update = (view: Parameters<SlackDeps['client']['views']['update']>[0]['view']) =>
    deps.client.views.update({ view_id: viewId, ...(opened?.hash ? { hash: opened.hash } : {}), view });
  let ctx: FormContext;
  let refused: Refused | undefined;
  try {
    [ctx, refused] = await preparing;
  } catch (err) {
    deps.log.warn({ err, form: request.form }, 'could not prepare a form');
    await update(
      isDeadlinePassed(err)
        ? formModal(spec, placeholder, [section(`:no_entry: ${ACCESS_TOO_SLOW}`)], undefined)
        : catalogFailedView(
            spec,
            { metadata: placeholder } as FormContext,
            'gpuops cannot reach its queue right now.',
          ),
    ).catch((updateErr: unknown) => deps.log.warn({ err: updateErr }, 'could not update the form'));
    return { ok: true, viewId };
  }
  try {
    const answer = await update(
      refused
        ? formModal(spec, ctx.metadata, [section(`:no_entry: ${refused.message}`)], undefined)
        : spec.view(ctx),
    );
    if (!refused) await afterOpen(deps, spec, ctx, now, answer.view);
  } catch (err) {
    deps.log.warn({ err, form: request.form }, 'could not fill in a form');
  }
  return { ok: true, viewId };
}

/** Once the form is open: ask for the catalogue it waits for, or for a refresh of stale data. */
async function afterOpen(
  deps: SlackDeps,
  spec: ReturnType<typeof formSpecOf>,
  ctx: FormContext,
  now: number,
  opened: { id?: string; hash?: string } | undefined,
): Promise<void> {
  const viewId = opened?.id ?? '';
  if (!spec.needsCatalog) return;
  const catalog = ctx.catalog?.catalog;
  if (!catalog && viewId) {
    try {
      await requestRefresh(deps, ctx, { id: viewId, hash: opened?.hash });
    } catch (err) {
      deps.log.warn({ err }, 'could not ask for the catalogue');
      await deps.client.views
        .update({
          view_id: viewId,
          view: catalogFailedView(spec, ctx, 'gpuops cannot reach its queue right now.'),
        })
        .catch((updateErr: unknown) => deps.log.warn({ err: updateErr }, 'could not update the form'));
    }
  } else if (catalog && now - catalog.refreshedAt > CATALOG_STALE_MS) {
    await requestRefresh(deps, ctx, undefined).catch((err: unknown) =>
      deps.log.warn({ err }, 'could not ask for a catalogue refresh'),
    );
  }
}

/** deps.openModal: the form of a `/gpu …` command typed without its arguments. */
export function createOpenModal(deps: SlackDeps): NonNullable<SlackDeps['openModal']> {
  return async (command, slash, access, deadline) => {
    const target = formFor(command);
    if (!target) return { text: 'That form is not available; give the arguments instead (see /gpu help).' };
    const result = await openForm(
      deps,
      {
        form: target.form,
        prefill: target.prefill,
        triggerId: slash.trigger_id,
        channelId: slash.channel_id,
        userId: slash.user_id,
        responseUrl: slash.response_url,
        deadline,
      },
      access,
    );
    return result.ok ? undefined : { text: result.text };
  };
}
