import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
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
    // The Home tab is published when someone opens it: both manifests subscribe to that event.
    expect(http.settings.event_subscriptions).toEqual({
      request_url: http.features.slash_commands[0].url,
      bot_events: ['app_home_opened'],
    });
    expect(socket.settings.event_subscriptions).toEqual({ bot_events: ['app_home_opened'] });
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
});
