import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import { REFRESH_ACTION } from '../../commands/forms/catalog-blocks.js';
import { decodeModalMetadata, FormMetadataError } from '../../commands/forms/modal-metadata.js';
import { OPEN_FORM_ACTIONS, readOpenFormValue } from '../../commands/forms/open-form-button.js';
import { withDeadline } from '../../commands/kit/with-deadline.js';
import type { CatalogRefreshData } from '../../jobs/job-data.js';
import { jobIdFor } from '../../jobs/queue.js';
import { addSystemJob } from '../../jobs/system-jobs.js';
import { homeOpenedBy } from '../../store/home-state.js';
import { openForm } from '../open-form.js';
import { answerPress } from '../response-url.js';
import type { SlackDeps } from '../slack-deps.js';
import { answerOnHome, fromHome } from './home-actions.js';

/** The person's DM with the app: as recorded when they opened the Home tab, else opened now. */
async function appDmOf(deps: SlackDeps, userId: string): Promise<string | undefined> {
  const [known] = await homeOpenedBy(deps.store, [userId]).catch(() => [undefined]);
  if (known) return known;
  const opened = await deps.client.conversations.open({ users: userId }).catch(() => undefined);
  return opened?.channel?.id;
}

export const UNKNOWN_FORM =
  'That button opens a form this version of gpuops does not have, so nothing was opened; type the command instead (`/gpu help` lists them).';

// Buttons of the forms: "Refresh prices and types" inside a form (a `catalog.refresh` job updates the
// open form in place), and "open a form" buttons on messages (see commands/forms/open-form-button.ts).

export function registerFormActions(app: App, deps: SlackDeps): void {
  app.action<BlockAction<ButtonAction>>(REFRESH_ACTION, async ({ ack, body }) => {
    await ack();
    const view = body.view;
    if (!view) return;
    try {
      const metadata = decodeModalMetadata(view.private_metadata);
      const data: CatalogRefreshData = {
        v: 1,
        system: 'catalog.refresh',
        ...(metadata.projectId ? { projectId: metadata.projectId } : {}),
        view: { id: view.id, hash: view.hash, metadata: view.private_metadata },
      };
      await withDeadline(
        addSystemJob(deps.queue, data, `catalog-view-${jobIdFor(view.id, view.hash)}`),
        1_500,
        'the queue',
      );
    } catch (err) {
      if (!(err instanceof FormMetadataError))
        deps.log.warn({ err }, 'could not ask for a catalogue refresh');
    }
  });

  app.action<BlockAction<ButtonAction>>(OPEN_FORM_ACTIONS, async ({ ack, body, action, respond }) => {
    await ack();
    const target = readOpenFormValue(action.value);
    const home = fromHome(body);
    // From the Home tab: the form's request is made in the person's DM with the app.
    const channelId =
      body.channel?.id ??
      (body.container as { channel_id?: string }).channel_id ??
      (home ? await appDmOf(deps, body.user.id) : undefined);
    if (!target || !channelId) return;
    const result = await openForm(deps, {
      form: target.form,
      prefill: target.cluster ? { cluster: target.cluster } : {},
      triggerId: body.trigger_id,
      channelId,
      userId: body.user.id,
      responseUrl: body.response_url,
    }).catch((err: unknown) => {
      // A button another version of gpuops posted may name a form this one does not have.
      if (err instanceof FormMetadataError) return { ok: false as const, text: UNKNOWN_FORM };
      deps.log.warn({ err }, 'could not open a form from a button');
      return {
        ok: false as const,
        text: 'gpuops cannot reach its queue right now. Please try again in a minute.',
      };
    });
    if (!result.ok && home) await answerOnHome(deps, body.user.id, result.text);
    else if (!result.ok) {
      await answerPress(
        deps,
        { respond, userId: body.user.id, channelId },
        result.text,
        'could not answer a button',
      );
    }
  });
}
