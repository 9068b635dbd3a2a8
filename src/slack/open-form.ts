import type { SlashCommand } from '@slack/bolt';
import { catalogFailedView } from '../commands/forms/catalog-blocks.js';
import { type FormContext, filesystemFieldFor } from '../commands/forms/form-kit.js';
import { encodeModalMetadata, type FormKind, type ModalMetadata } from '../commands/forms/modal-metadata.js';
import { withDeadline } from '../commands/kit/with-deadline.js';
import type { GpuCommand } from '../commands/registry.js';
import { docFor, formFor, formSpecOf } from '../commands/registry.js';
import type { CatalogRefreshData } from '../jobs/job-data.js';
import { jobIdFor } from '../jobs/queue.js';
import { addSystemJob } from '../jobs/system-jobs.js';
import { CATALOG_STALE_MS, readCatalog } from '../store/catalog-cache.js';
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

/** Opens a form for the person who typed or clicked; never calls the cloud. */
export async function openForm(deps: SlackDeps, request: OpenFormRequest): Promise<OpenFormResult> {
  const now = Date.now();
  const ctx = await contextFor(deps, request, now);
  const spec = formSpecOf(request.form);
  let opened: { id?: string; hash?: string } | undefined;
  try {
    const answer = await deps.client.views.open({ trigger_id: request.triggerId, view: spec.view(ctx) });
    opened = answer.view;
  } catch (err) {
    deps.log.warn({ err, form: request.form }, 'could not open a form');
    return {
      ok: false,
      text: `I could not open the form (Slack said "${slackError(err)}"). Try again, or give the arguments instead: \`${docFor(request.form).usage}\`.`,
    };
  }
  const viewId = opened?.id ?? '';
  if (spec.needsCatalog) {
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
  return { ok: true, viewId };
}

/** deps.openModal: the form of a `/gpu …` command typed without its arguments. */
export function createOpenModal(
  deps: SlackDeps,
): (command: GpuCommand, slash: SlashCommand) => Promise<{ text?: string } | undefined> {
  return async (command, slash) => {
    const target = formFor(command);
    if (!target) return { text: 'That form is not available; give the arguments instead (see /gpu help).' };
    const result = await openForm(deps, {
      form: target.form,
      prefill: target.prefill,
      triggerId: slash.trigger_id,
      channelId: slash.channel_id,
      userId: slash.user_id,
      responseUrl: slash.response_url,
    });
    return result.ok ? undefined : { text: result.text };
  };
}
