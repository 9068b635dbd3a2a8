import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { homeOf } from '../../src/devkit/slack/home-tabs.js';
import { sshKeyFingerprint } from '../../src/render/ssh-keys.js';
import { ed25519PublicKey } from '../cloud/ssh-key-fixtures.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { OPEN_TEST_POLICY } from '../support/guardrails.js';
import { openHome, published, textOf } from '../support/home-driver.js';
import { privateAnswer, settled, shown } from '../support/slash-requests.js';
import { until } from '../support/until.js';
import { expectCleanSlack } from './answers.js';

// How do I log in? After a create or a start, in `/gpu show` and on the Home tab, a running machine
// shows `ssh <user>@<ip>` and the key to use: the user from the policy's `login` (image, then type, then
// the default), the key from what the requester added through gpuops, or how to add one.

const ADA = 'U0ADA';
const IP = /\d+\.\d+\.\d+\.\d+/;

/** The login line of what the person saw, with the address replaced by IP. */
function loginLine(seen: string): string | undefined {
  const line = seen.match(/:key: Log in: [^"]*/)?.[0];
  return line?.replace(IP, 'IP');
}

describe('how to log in to a machine (shape B)', () => {
  let stack: BotStack;
  const laptop = ed25519PublicKey('ada@example.com');

  beforeAll(async () => {
    stack = await startBotStack({
      shape: 'B',
      watch: { pollEveryMs: 150 },
      policy: {
        ...OPEN_TEST_POLICY,
        login: {
          defaultUser: 'ubuntu',
          byType: { 'l40s-48gb.2x': 'admin' },
          byImage: { 'rocky9-cuda12': 'rocky' },
        },
      },
    });
  }, 30_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('answers a create with the ssh command, and says how to add a key when gpuops knows none', async () => {
    const message = await settled(stack, 'create login-1 h100-hgx-80gb.1x', 'Done');
    const ip = (await stack.cloud.listInstances()).find((i) => i.name === 'login-1')?.ip;
    expect(JSON.stringify(message.blocks)).toContain(`\`ssh ubuntu@${ip}\``);
    expect(loginLine(JSON.stringify(message.blocks))).toBe(
      ':key: Log in: `ssh ubuntu@IP`. gpuops knows no SSH key of yours: add your public key to the account with `/gpu keys add <name> <public key>`.',
    );
  });

  it('names the key the requester added through gpuops, by fingerprint and never its comment', async () => {
    await settled(stack, `keys add laptop ${laptop}`, 'Done');
    await settled(stack, 'stop login-1', 'Done');
    const started = JSON.stringify((await settled(stack, 'start login-1', 'Done')).blocks);
    expect(loginLine(started)).toBe(
      `:key: Log in: \`ssh ubuntu@IP\` with your SSH key *laptop* (\`ssh-ed25519 ${sshKeyFingerprint(laptop)}\`).`,
    );
    expect(started).not.toContain('ada@example.com');
    const show = shown(await privateAnswer(stack, 'show login-1'));
    expect(loginLine(show)).toBe(loginLine(started));
  });

  it('logs in as the user the policy names for the machine’s image, then for its type', async () => {
    const byImage = await settled(stack, 'create login-2 h100-hgx-80gb.1x --image rocky9-cuda12', 'Done');
    expect(loginLine(JSON.stringify(byImage.blocks))).toMatch(
      /^:key: Log in: `ssh rocky@IP` with your SSH key/,
    );
    const byType = await settled(stack, 'create login-3 l40s-48gb.2x', 'Done');
    expect(loginLine(JSON.stringify(byType.blocks))).toMatch(
      /^:key: Log in: `ssh admin@IP` with your SSH key/,
    );
    // A stopped machine has no address to connect to: no login line.
    await settled(stack, 'stop login-3', 'Done');
    expect(shown(await privateAnswer(stack, 'show login-3'))).not.toContain('Log in:');
  });

  it('shows the ssh line of a running machine on its owner’s Home tab, with their key', async () => {
    await stack.command('watch on');
    const ip = (await stack.cloud.listInstances()).find((i) => i.name === 'login-1')?.ip;
    await until('the watcher to see login-1 running', async () => {
      const since = stack.slack.mark();
      await openHome(stack);
      const call = await published(stack, since, () => true);
      return JSON.stringify(call.body.view).includes('login-1* · *running*') ? true : undefined;
    });
    const home = textOf(homeOf(stack.slack, ADA));
    expect(home).toContain(`\`ssh ubuntu@${ip}\``);
    expect(home).toContain(
      `:key: Log in with the \`ssh\` line of a running machine with your SSH key *laptop* (\`ssh-ed25519 ${sshKeyFingerprint(laptop)}\`).`,
    );
    expectCleanSlack(stack);
  }, 30_000);
});
