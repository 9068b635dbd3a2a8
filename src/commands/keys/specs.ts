import { z } from 'zod';
import { checkSshPublicKey, PASTE_KEY, parseSshPublicKey, SSH_KEY_RULE } from '../../cloud/rules.js';
import { type ArgReader, stripOuterQuotes } from '../arg-reader.js';
import { sshKeyForm } from '../forms/ssh-key-modal.js';
import { modal, name, onName, paged, pagedNoArgs, ruled } from '../schema-kit.js';
import { defineCommand } from '../spec.js';

// SSH keys live on the platform API, which every shape has: no infrastructure operation needed.

const keys = defineCommand({
  kind: 'keys',
  group: 'catalog',
  usage: '/gpu keys [--page N]',
  summary: 'SSH public keys on the account and who added them',
  example: '/gpu keys',
  schema: paged('keys'),
  parse: pagedNoArgs('keys'),
  delivery: 'ephemeral',
  operationClass: 'read',
  needs: [],
});

const keysAdd = defineCommand({
  kind: 'keys.add',
  group: 'catalog',
  usage: '/gpu keys add [<name> <public key>]',
  summary: 'add your SSH public key (the rest of the line); with no arguments a form',
  example:
    '/gpu keys add laptop ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFuyvIwN8SVrspCLSMqeCCUbe1WBH+UgcwkB1g3duGfL ada@laptop',
  schema: z.discriminatedUnion('modal', [
    modal('keys.add'),
    z.object({
      kind: z.literal('keys.add'),
      modal: z.literal(false),
      name,
      /** Normalised `<type> <base64> [comment]`. */
      publicKey: ruled(checkSshPublicKey, SSH_KEY_RULE),
    }),
  ]),
  parse(r: ArgReader) {
    const nameWord = r.word();
    if (nameWord === null) return { kind: 'keys.add', modal: true };
    const keyName = r.name(nameWord, 'a name for the key');
    const text = stripOuterQuotes(r.rest());
    if (text === '') {
      r.fail(`${r.label()} needs the public key after the name (or no arguments, for a form)`);
    }
    const parsed = parseSshPublicKey(text);
    if (typeof parsed === 'string') r.fail(`That public key is not valid: ${parsed}; ${PASTE_KEY}`);
    const publicKey = [parsed.type, parsed.blob, parsed.comment].filter((p) => p !== '').join(' ');
    return { kind: 'keys.add', modal: false, name: keyName, publicKey };
  },
  delivery: 'channel',
  operationClass: 'operate',
  needs: [],
  form: { spec: sshKeyForm },
  notes:
    'The public key is everything after the name, as pasted from `~/.ssh/id_ed25519.pub`; quotes around it are optional and its comment may contain spaces or apostrophes. Accepted types: ssh-rsa, ssh-dss, ssh-ed25519, ecdsa-sha2-nistp256/384/521, and the type written in front must match the one inside the key data.',
});

const keysRm = defineCommand({
  kind: 'keys.rm',
  group: 'catalog',
  usage: '/gpu keys rm <name>',
  summary: 'remove an SSH key from the account',
  example: '/gpu keys rm laptop',
  schema: onName('keys.rm', 'name'),
  parse: (r) => ({ kind: 'keys.rm', name: r.onlyName('the name of the key') }),
  refers: (c) => [{ what: 'key', ref: c.name }],
  delivery: 'channel',
  operationClass: 'operate',
  needs: [],
});

export const specs = [keys, keysAdd, keysRm] as const;

/** Words people reach for that this family spells differently: offered, never silently accepted. */
export const synonyms: Readonly<Record<string, string>> = { key: 'keys', ssh: 'keys' };
