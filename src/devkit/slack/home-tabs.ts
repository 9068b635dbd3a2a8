import type { SlackState } from './slack-state.js';
import type { RecordedCall, StoredView } from './types.js';

// views.publish as Slack documents it: one Home view per person, replaced by each publish (same view
// id, new hash); `hash` guards against a stale publish (hash_conflict); only a `home` view, within the
// view limits; `not_enabled` when the app has no Home tab. An image block's slack_file must name a
// file whose upload completed (Slack rejects the view otherwise).

type Json = Record<string, unknown>;

/** The Home view published for `userId`, if any. */
export function homeOf(state: SlackState, userId: string): StoredView | undefined {
  return [...state.views.values()].find((v) => v.user === userId && v.view.type === 'home');
}

function unknownFiles(state: SlackState, view: Json): string[] {
  const blocks = Array.isArray(view.blocks) ? (view.blocks as Json[]) : [];
  return blocks.flatMap((block, i) => {
    const file = block.type === 'image' ? (block.slack_file as { id?: unknown } | undefined) : undefined;
    if (typeof file?.id !== 'string') return [];
    return state.files.get(file.id)?.completed
      ? []
      : [`[ERROR] invalid slack file: ${file.id} [json-pointer:/view/blocks/${i}/slack_file]`];
  });
}

export function publishHome(state: SlackState, call: RecordedCall, enabled: boolean): Json {
  const { body } = call;
  const userId = typeof body.user_id === 'string' ? body.user_id : '';
  if (userId === '') return { ok: false, error: 'invalid_arguments' };
  if (!enabled) return { ok: false, error: 'not_enabled' };
  const invalid = state.checkViewBody(call.method, body.view);
  if (invalid) return invalid;
  const view = body.view as Json;
  if (view.type !== 'home') {
    return {
      ok: false,
      error: 'invalid_arguments',
      response_metadata: { messages: ['[ERROR] views.publish takes a view of type home'] },
    };
  }
  const files = unknownFiles(state, view);
  if (files.length > 0)
    return { ok: false, error: 'invalid_arguments', response_metadata: { messages: files } };
  const current = homeOf(state, userId);
  if (current && typeof body.hash === 'string' && body.hash !== current.hash) {
    return { ok: false, error: 'hash_conflict' };
  }
  const stored = current ?? state.addView(view, userId, undefined);
  if (current) state.updateView(current, view);
  return { ok: true, view: state.viewJson(stored) };
}
