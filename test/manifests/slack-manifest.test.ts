import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { STEPS } from '../../src/commands/workflow/steps.js';
import {
  appManifest,
  BOT_SCOPES,
  EVENTS_PATH,
  SLASH_COMMAND,
  scopesTable,
} from '../../src/slack/app-manifest.js';

// biome-ignore lint/suspicious/noExplicitAny: a manifest read back as JSON, only for assertions
type Json = any;
const read = (name: string): Json =>
  JSON.parse(readFileSync(new URL(`../../manifests/${name}`, import.meta.url), 'utf8'));

describe('Slack app manifests', () => {
  it.each([
    ['slack-app.http.json', false],
    ['slack-app.socket-mode.json', true],
  ] as const)('%s is what the code generates (regenerate with npm run manifests)', (file, socketMode) => {
    expect(read(file)).toEqual(appManifest({ socketMode }));
  });

  it('names the command, scopes and request URL the code uses', () => {
    const http = read('slack-app.http.json');
    expect(http.features.slash_commands.map((c: { command: string }) => c.command)).toEqual([SLASH_COMMAND]);
    expect(http.features.slash_commands[0].url).toMatch(new RegExp(`^https://.+${EVENTS_PATH}$`));
    expect(http.settings.interactivity.request_url).toBe(http.features.slash_commands[0].url);
    expect(http.oauth_config.scopes.bot).toEqual(Object.keys(BOT_SCOPES));
    const socket = read('slack-app.socket-mode.json');
    expect(socket.settings.socket_mode_enabled).toBe(true);
    expect(socket.settings.interactivity.request_url).toBeUndefined();
    expect(socket.features.slash_commands[0].url).toBeUndefined();
    // The Home tab is published when someone opens it, and Workflow Builder runs the custom steps
    // through function_executed: both manifests subscribe to both events.
    const events = ['app_home_opened', 'function_executed'];
    expect(http.settings.event_subscriptions).toEqual({
      request_url: http.features.slash_commands[0].url,
      bot_events: events,
    });
    expect(socket.settings.event_subscriptions).toEqual({ bot_events: events });
  });

  it('turns the Home tab on and makes the DM tab read-only in both manifests: nothing answers messages typed there', () => {
    for (const file of ['slack-app.http.json', 'slack-app.socket-mode.json']) {
      expect(read(file).features.app_home).toEqual({
        home_tab_enabled: true,
        messages_tab_enabled: true,
        messages_tab_read_only_enabled: true,
      });
    }
  });

  it('says in docs/operations.md why each scope is needed, as the generator prints it', () => {
    const operations = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
    expect(operations).toContain(scopesTable());
    for (const [scope, why] of Object.entries(BOT_SCOPES)) {
      expect(why.length, scope).toBeGreaterThan(10);
    }
  });

  it('stays within the limits of Slack’s manifest schema', () => {
    for (const file of ['slack-app.http.json', 'slack-app.socket-mode.json']) {
      const m = read(file);
      expect(m._metadata.major_version).toBe(1);
      expect(m.display_information.name.length).toBeLessThanOrEqual(35);
      expect(m.display_information.description.length).toBeLessThanOrEqual(140);
      expect(m.display_information.background_color).toMatch(/^#[0-9a-fA-F]{6}$/);
      expect(m.features.bot_user.display_name.length).toBeLessThanOrEqual(80);
      for (const c of m.features.slash_commands) {
        expect(c.command).toMatch(/^\/.{1,31}$/);
        expect(c.description.length).toBeLessThanOrEqual(2000);
        expect(c.usage_hint.length).toBeLessThanOrEqual(1000);
      }
      expect(new Set(m.oauth_config.scopes.bot).size).toBe(m.oauth_config.scopes.bot.length);
      const events: string[] = m.settings.event_subscriptions.bot_events;
      expect(new Set(events).size).toBe(events.length);
      for (const e of events) expect(e.length).toBeLessThanOrEqual(50);
    }
  });

  it('offers the workflow steps: org-ready, remote functions, function_executed delivered where /gpu is', () => {
    for (const [file, socketMode] of [
      ['slack-app.http.json', false],
      ['slack-app.socket-mode.json', true],
    ] as const) {
      const m = read(file);
      expect(m.settings.org_deploy_enabled).toBe(true);
      expect(m.settings.function_runtime).toBe('remote');
      expect(m.settings.event_subscriptions.bot_events).toContain('function_executed');
      expect(m.settings.event_subscriptions.request_url).toBe(
        socketMode ? undefined : m.settings.interactivity.request_url,
      );
      expect(Object.keys(m.functions)).toEqual(STEPS.map((s) => s.callbackId));
    }
  });

  // What Slack's manifest schema and its custom-step documentation ask of `functions`, in our words:
  // at most 50 functions, each keyed by its callback_id, with a title, a description and at most 20
  // input and 20 output parameters, each side a map of parameter name → parameter (no `properties`
  // wrapper, no `required` list: a parameter says itself whether it is required); a parameter has one
  // of Slack's parameter types (the primitive types or a slack#/types/… type) and only the fields the
  // schema knows (type, title, description, is_required, is_hidden, hint).
  const SLACK_PARAMETER_TYPES = new Set([
    'integer',
    'number',
    'boolean',
    'string',
    'object',
    'array',
    'slack#/types/user_context',
    'slack#/types/user_permission',
    'slack#/types/user_id',
    'slack#/types/channel_id',
    'slack#/types/usergroup_id',
    'slack#/types/timestamp',
    'slack#/types/blocks',
    'slack#/types/credential/oauth2',
    'slack#/types/date',
    'slack#/types/interactivity',
    'slack#/types/rich_text',
    'slack#/types/form_input',
    'slack#/types/form_input_object',
    'slack#/types/message_ts',
    'slack#/types/message_context',
  ]);

  const SLACK_FILLED = ['slack#/types/user_context', 'slack#/types/interactivity'];

  it('declares each step as Slack’s schema for functions allows', () => {
    const m = read('slack-app.http.json');
    const functions = Object.entries(m.functions) as [string, Json][];
    expect(functions.length).toBeGreaterThan(0);
    expect(functions.length).toBeLessThanOrEqual(50);
    for (const [callbackId, fn] of functions) {
      expect(callbackId).toMatch(/^[a-z][a-z0-9_]{0,63}$/);
      expect(Object.keys(fn).sort()).toEqual([
        'description',
        'input_parameters',
        'output_parameters',
        'title',
      ]);
      expect(fn.title.length, callbackId).toBeGreaterThan(0);
      expect(fn.description.length, callbackId).toBeGreaterThan(0);
      for (const side of ['input_parameters', 'output_parameters'] as const) {
        const params = fn[side] as Record<string, Json>;
        const names = Object.keys(params);
        expect(names.length, `${callbackId} ${side}`).toBeLessThanOrEqual(20);
        for (const name of names) {
          const p = params[name];
          expect(name).toMatch(/^[a-z][a-z0-9_]*$/);
          expect(SLACK_PARAMETER_TYPES.has(p.type), `${callbackId}.${name}: ${p.type}`).toBe(true);
          expect(typeof p.title).toBe('string');
          expect(typeof p.description).toBe('string');
          expect(typeof p.is_required).toBe('boolean');
          const known = ['type', 'title', 'description', 'is_required', 'is_hidden', 'hint'];
          expect(
            Object.keys(p).filter((k) => !known.includes(k)),
            `${callbackId}.${name}`,
          ).toEqual([]);
        }
      }
      // Every step declares who it acts as with a type Slack fills in and a builder cannot type (the
      // person who used the workflow, or who interacted with it), required; and no input of a type a
      // builder can type names a person, so none can decide who acts.
      const inputs = Object.entries(fn.input_parameters as Record<string, Json>);
      const acting = inputs.filter(([, p]) => SLACK_FILLED.includes(p.type));
      expect(acting, callbackId).toHaveLength(1);
      expect(acting[0]![1].is_required, callbackId).toBe(true);
      expect(
        inputs.filter(([, p]) => p.type === 'slack#/types/user_id').map(([n]) => n),
        callbackId,
      ).toEqual([]);
    }
  });
});
