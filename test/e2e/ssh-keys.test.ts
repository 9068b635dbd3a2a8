import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ed25519PublicKey, mislabelledKey } from '../cloud/ssh-key-fixtures.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { answeredPrivately } from '../support/slash-requests.js';
import { channelRequest, expectCleanSlack, finalMessage, listenerAnswer, privateAnswer } from './answers.js';

// /gpu keys, /gpu keys add, /gpu keys rm: the platform API's account keys and their Slack owners.

const ADA = { userId: 'U0ADA', userName: 'ada' };
const BOB = { userId: 'U0BOB', userName: 'bob' };

const blobOf = (key: string) => key.split(' ')[1]!;
const fingerprint = (key: string) =>
  `SHA256:${createHash('sha256')
    .update(Buffer.from(blobOf(key), 'base64'))
    .digest('base64')
    .replace(/=+$/, '')}`;

describe.each(['A', 'B', 'C'] as const)('SSH keys end to end, shape %s', (shape) => {
  let stack: BotStack;
  const laptop = ed25519PublicKey('ada@laptop');
  const ci = ed25519PublicKey('ci@runner');
  const accountKeys = () => stack.sim.control.state().sshKeys;

  beforeAll(async () => {
    stack = await startBotStack({ shape });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('adds a key to the account, records its owner, and shows it short in the channel', async () => {
    const ts = await channelRequest(stack, `keys add laptop ${laptop}`, ADA);
    const message = await finalMessage(stack, ts, 'Done');
    expect(message.text).toContain(
      `Added SSH key laptop (ssh-ed25519 ${fingerprint(laptop)}) to the account.`,
    );
    const shown = JSON.stringify(message.history);
    expect(shown).toContain('<@U0ADA>');
    expect(shown).not.toContain(blobOf(laptop));
    expect(shown).not.toContain('ada@laptop');
    expect(accountKeys()).toEqual([{ name: 'laptop', public_key: laptop }]);
    expect(await stack.store.keyOwner('laptop')).toMatchObject({ userId: 'U0ADA', publicKey: laptop });
    expectCleanSlack(stack);
  });

  it('lists the account keys privately with owner and fingerprint, never the whole key', async () => {
    await stack.platform.addSshKey({ name: 'ci-key', public_key: ci });
    const answer = await privateAnswer(stack, 'keys', BOB);
    expect(answer.text).toBe('SSH keys on the account (2): 2 items');
    expect(answer.blocksJson).toContain(
      `*ci-key* · \`ssh-ed25519 ${fingerprint(ci)} ci@runner\` · owner unknown`,
    );
    expect(answer.blocksJson).toContain(
      `*laptop* · \`ssh-ed25519 ${fingerprint(laptop)} ada@laptop\` · added by <@U0ADA>`,
    );
    expect(answer.blocksJson).not.toContain(blobOf(laptop));
    expect(answer.blocksJson).not.toContain(blobOf(ci));
    expectCleanSlack(stack);
  });

  it('is idempotent by name: the same key again is a no-op, an unowned identical key is adopted', async () => {
    // A new comment makes it a new request (not a double click) with the same key.
    const again = await channelRequest(
      stack,
      `keys add laptop ssh-ed25519 ${blobOf(laptop)} ada@new-laptop`,
      ADA,
    );
    expect((await finalMessage(stack, again, 'Done')).text).toContain(
      'is already on the account and yours; nothing to do',
    );
    const adopt = await channelRequest(stack, `keys add ci-key ${ci}`, BOB);
    expect((await finalMessage(stack, adopt, 'Done')).text).toContain(
      'was already on the account with this public key; it is now recorded as yours',
    );
    expect(await stack.store.keyOwner('ci-key')).toMatchObject({ userId: 'U0BOB' });
    expect(accountKeys()).toHaveLength(2);
    expect(stack.sim.control.createCount('createSshKey', 'laptop')).toBe(1);
  });

  it('refuses a taken name with another key, and says how to pick another', async () => {
    const other = ed25519PublicKey('ada@desk');
    const ts = await channelRequest(stack, `keys add laptop ${other}`, ADA);
    const message = await finalMessage(stack, ts, 'Failed');
    expect(message.text).toContain(
      'An SSH key named laptop is already on the account with a different public key; pick another name, e.g. /gpu keys add laptop-2',
    );
    expect(accountKeys().find((k) => k.name === 'laptop')?.public_key).toBe(laptop);
  });

  it('answers an invalid key at once, naming the rule, and queues nothing', async () => {
    const wrongType = await listenerAnswer(stack, `keys add bad ${laptop.replace('ssh-ed25519', 'ssh-foo')}`);
    expect(wrongType).toContain(
      'key type "ssh-foo" is not accepted; use one of ssh-rsa, ssh-dss, ssh-ed25519',
    );
    const mislabelled = await listenerAnswer(stack, `keys add bad ${mislabelledKey()}`);
    expect(mislabelled).toContain('the key says "ssh-rsa" but its data is a "ssh-ed25519" key');
    expect(await stack.requestsQueued()).toBe(0);
    expect(accountKeys().some((k) => k.name === 'bad')).toBe(false);
  });

  it("refuses to remove someone else's key, and removes one's own", async () => {
    const refused = await channelRequest(stack, 'keys rm laptop', BOB);
    expect((await finalMessage(stack, refused, 'Failed')).text).toContain(
      'The SSH key laptop belongs to the Slack user who added it; only they can remove it.',
    );
    expect(accountKeys().some((k) => k.name === 'laptop')).toBe(true);

    const removed = await channelRequest(stack, 'keys rm laptop', ADA);
    expect((await finalMessage(stack, removed, 'Done')).text).toContain(
      'Removed SSH key laptop from the account.',
    );
    expect(accountKeys().some((k) => k.name === 'laptop')).toBe(false);
    expect(await stack.store.keyOwner('laptop')).toBeUndefined();
    expect(await stack.store.keysOf('U0ADA')).toEqual([]);
  });

  it('lets anyone remove a key with no recorded owner, and says when there is no such key', async () => {
    await stack.platform.addSshKey({ name: 'legacy', public_key: ed25519PublicKey('old@box') });
    const removed = await channelRequest(stack, 'keys rm legacy', ADA);
    expect((await finalMessage(stack, removed, 'Done')).text).toContain('Removed SSH key legacy');
    expect(accountKeys().some((k) => k.name === 'legacy')).toBe(false);

    // A name that is not there is answered to the requester alone: the channel sees nothing.
    expect(await answeredPrivately(stack, 'keys rm ci-kee', ADA)).toBe(
      'No SSH key "ci-kee" on the account. Did you mean `ci-key`? (`/gpu keys` lists them.)',
    );
    expect(await answeredPrivately(stack, 'keys rm nope', ADA)).toBe(
      'No SSH key "nope" on the account. The account has: ci-key. Check the name with `/gpu keys`.',
    );
    expectCleanSlack(stack);
  });
});
