import { publishHome } from './home-tabs.js';
import type { SlackState } from './slack-state.js';
import type { Handler, StoredFile } from './types.js';

// The Web API methods gpuops calls, answered as Slack documents them: the same arguments checked, the
// same error codes (channel_not_found, thread_not_found, invalid_blocks, message_not_found,
// expired_trigger_id, hash_conflict, user_not_found, file_not_found, …).

export function slackMethods(state: SlackState): Readonly<Record<string, Handler>> {
  return {
    'auth.test': () => ({
      ok: true,
      url: 'https://fake.slack.test/',
      team: 'Fake Team',
      user: 'gpuops',
      // An org-wide install answers for the organisation: no workspace id.
      ...(state.orgWideInstall ? {} : { team_id: state.teamId }),
      ...(state.enterpriseId ? { enterprise_id: state.enterpriseId } : {}),
      user_id: state.botUserId,
      bot_id: state.botId,
      is_enterprise_install: state.orgWideInstall,
    }),

    'chat.postMessage': (call) => {
      const { body } = call;
      const channelArg = typeof body.channel === 'string' ? body.channel : '';
      if (channelArg === '') return { ok: false, error: 'channel_not_found' };
      const invalid = state.checkMessage(call.method, body);
      if (invalid) return invalid;
      // Posting to a user id lands in the DM with that user, as in Slack.
      const channel = /^[UW]/.test(channelArg) ? state.dmChannelFor(channelArg) : channelArg;
      const denied = state.accessError(call.method, channel);
      if (denied) return denied;
      const threadTs =
        typeof body.thread_ts === 'string' && body.thread_ts !== '' ? body.thread_ts : undefined;
      if (threadTs !== undefined && !state.message(channel, threadTs)) {
        return { ok: false, error: 'thread_not_found' };
      }
      const stored = state.store(channel, body, threadTs);
      return { ok: true, channel, ts: stored.ts, message: state.messageJson(stored) };
    },

    'chat.update': (call) => {
      const { body } = call;
      const channel = String(body.channel ?? '');
      const ts = String(body.ts ?? '');
      const denied = state.accessError(call.method, channel);
      if (denied) return denied;
      const stored = state.message(channel, ts);
      if (!stored || stored.deleted) return { ok: false, error: 'message_not_found' };
      const invalid = state.checkMessage(call.method, body);
      if (invalid) return invalid;
      state.edit(stored, body);
      return { ok: true, channel, ts, text: stored.text ?? '', message: state.messageJson(stored) };
    },

    'chat.postEphemeral': (call) => {
      const { body } = call;
      const channel = String(body.channel ?? '');
      const user = String(body.user ?? '');
      if (channel === '') return { ok: false, error: 'channel_not_found' };
      if (user === '') return { ok: false, error: 'user_not_in_channel' };
      const denied = state.accessError(call.method, channel);
      if (denied) return denied;
      const invalid = state.checkMessage(call.method, body);
      if (invalid) return invalid;
      const ephemeral = state.addEphemeral(channel, user, body);
      return { ok: true, message_ts: ephemeral.messageTs };
    },

    'chat.delete': (call) => {
      const channel = String(call.body.channel ?? '');
      const ts = String(call.body.ts ?? '');
      const stored = state.message(channel, ts);
      if (!stored || stored.deleted) return { ok: false, error: 'message_not_found' };
      state.remove(stored);
      return { ok: true, channel, ts };
    },

    // Deletes a file the bot uploaded; it no longer shows anywhere (a view naming it is refused).
    'files.delete': (call) => {
      const id = String(call.body.file ?? '');
      if (!state.files.has(id)) return { ok: false, error: 'file_not_found' };
      state.files.delete(id);
      return { ok: true };
    },

    'views.open': (call) => state.openView(call, undefined),

    'views.push': (call) => {
      // A pushed view sits on top of the one the interaction came from.
      const top = [...state.views.values()].at(-1);
      return state.openView(call, top?.id);
    },

    'views.publish': (call) => publishHome(state, call, state.homeTabEnabled),

    'views.update': (call) => {
      const { body } = call;
      const id = typeof body.view_id === 'string' ? body.view_id : undefined;
      const externalId = typeof body.external_id === 'string' ? body.external_id : undefined;
      const stored =
        (id !== undefined ? state.views.get(id) : undefined) ??
        [...state.views.values()].find((v) => externalId !== undefined && v.view.external_id === externalId);
      if (!stored) return { ok: false, error: 'not_found' };
      if (typeof body.hash === 'string' && body.hash !== stored.hash) {
        return { ok: false, error: 'hash_conflict' };
      }
      const invalid = state.checkViewBody(call.method, body.view);
      if (invalid) return invalid;
      state.updateView(stored, body.view as Record<string, unknown>);
      return { ok: true, view: state.viewJson(stored) };
    },

    'users.info': (call) => {
      const user = state.users.get(String(call.body.user ?? ''));
      if (!user) return { ok: false, error: 'user_not_found' };
      return {
        ok: true,
        user: {
          id: user.id,
          team_id: user.team_id ?? state.teamId,
          ...((user.enterprise_id ?? state.enterpriseId)
            ? {
                enterprise_user: {
                  enterprise_id: user.enterprise_id ?? state.enterpriseId,
                  teams: [user.team_id ?? state.teamId],
                },
              }
            : {}),
          name: user.name,
          is_restricted: user.is_restricted ?? user.is_ultra_restricted ?? false,
          is_ultra_restricted: user.is_ultra_restricted ?? false,
          real_name: user.real_name ?? '',
          deleted: user.deleted ?? false,
          is_bot: user.is_bot ?? false,
          tz: user.tz ?? 'Europe/London',
          profile: {
            display_name: user.display_name ?? '',
            display_name_normalized: user.display_name ?? '',
            real_name: user.real_name ?? '',
            real_name_normalized: user.real_name ?? '',
          },
        },
      };
    },

    'usergroups.users.list': (call) => {
      const members = state.usergroups.get(String(call.body.usergroup ?? ''));
      if (!members) return { ok: false, error: 'no_such_subteam' };
      return { ok: true, users: [...members] };
    },

    'conversations.open': (call) => {
      const { body } = call;
      if (typeof body.channel === 'string' && body.channel !== '') {
        return { ok: true, channel: { id: body.channel } };
      }
      const users = String(body.users ?? '')
        .split(',')
        .map((u) => u.trim())
        .filter((u) => u !== '');
      if (users.length === 0) return { ok: false, error: 'users_list_not_supplied' };
      const unknown = users.find((u) => !state.users.has(u));
      if (unknown !== undefined) return { ok: false, error: 'user_not_found' };
      const id =
        users.length === 1 ? state.dmChannelFor(users[0]!) : `G${users.map((u) => u.slice(1)).join('')}`;
      return { ok: true, no_op: true, already_open: true, channel: { id } };
    },

    'files.getUploadURLExternal': (call) => {
      const { body } = call;
      const filename = typeof body.filename === 'string' ? body.filename : '';
      const length = Number(body.length);
      if (filename === '') return { ok: false, error: 'invalid_arguments' };
      if (!Number.isInteger(length) || length <= 0) return { ok: false, error: 'invalid_arguments' };
      const id = `F${state.nextTs().replace('.', '')}`;
      state.files.set(id, {
        id,
        filename,
        length,
        altText: typeof body.alt_text === 'string' ? body.alt_text : undefined,
        bytes: undefined,
        completed: false,
        title: undefined,
        channel: undefined,
        initialComment: undefined,
        threadTs: undefined,
        path: undefined,
      });
      return { ok: true, upload_url: `${state.baseUrl}/upload/${id}`, file_id: id };
    },

    'files.completeUploadExternal': async (call) => {
      const { body } = call;
      const list = Array.isArray(body.files) ? (body.files as Array<Record<string, unknown>>) : undefined;
      if (!list || list.length === 0) return { ok: false, error: 'invalid_arguments' };
      const files: StoredFile[] = [];
      for (const entry of list) {
        const file = state.files.get(String(entry.id ?? ''));
        if (!file) return { ok: false, error: 'file_not_found' };
        if (file.bytes === undefined) return { ok: false, error: 'file_not_uploaded' };
        files.push(file);
      }
      const channel =
        typeof body.channel_id === 'string' && body.channel_id !== '' ? body.channel_id : undefined;
      const threadTs =
        typeof body.thread_ts === 'string' && body.thread_ts !== '' ? body.thread_ts : undefined;
      const comment = typeof body.initial_comment === 'string' ? body.initial_comment : undefined;
      for (const [i, entry] of list.entries()) {
        const file = files[i]!;
        await state.saveFile(file);
        file.completed = true;
        file.title = typeof entry.title === 'string' ? entry.title : file.filename;
        file.channel = channel;
        file.initialComment = comment;
        file.threadTs = threadTs;
      }
      // Sharing a file posts a message carrying it, in the channel or the thread.
      if (channel !== undefined) state.store(channel, { text: comment }, threadTs, files);
      return { ok: true, files: files.map((f) => ({ id: f.id, title: f.title, name: f.filename })) };
    },

    'functions.completeSuccess': (call) => state.functionRuns.completeSuccess(call.body),

    'functions.completeError': (call) => state.functionRuns.completeError(call.body),

    'apps.connections.open': () => {
      if (state.socketModeUrl === undefined) return { ok: false, error: 'socket_mode_not_configured' };
      return { ok: true, url: state.socketModeUrl };
    },
  };
}
