import { PASTE_KEY, parseSshPublicKey } from '../../cloud/rules.js';
import { checkName } from '../value-rules.js';
import {
  complete,
  context,
  type FormContext,
  type FormSpec,
  type FormValues,
  formModal,
  nameInput,
  readRequired,
  readText,
  textInput,
} from './form-kit.js';

// `/gpu keys add` with no arguments: a name and the public key, pasted whole.

export const KEY_BLOCKS = { name: 'name', publicKey: 'public_key' } as const;

function view(ctx: FormContext) {
  return formModal(
    sshKeyForm,
    ctx.metadata,
    [
      context('The key is added to the account and recorded as yours, so `/gpu slurm adduser` can use it.'),
      nameInput(KEY_BLOCKS.name, 'Key name', 'e.g. laptop'),
      textInput(KEY_BLOCKS.publicKey, 'Public key', {
        multiline: true,
        placeholder: 'ssh-ed25519 AAAAC3Nza… you@laptop',
        hint: 'The one line of your .pub file: ssh-ed25519, ssh-rsa, ssh-dss or ecdsa-sha2-nistp256/384/521. Never the private key.',
      }),
    ],
    'Add key',
  );
}

function read(values: FormValues, _ctx: FormContext) {
  const errors: Record<string, string> = {};
  const name = readRequired(values, KEY_BLOCKS.name, errors, 'Give the key a name', checkName);
  const text = readText(values, KEY_BLOCKS.publicKey);
  const parsed = text === undefined ? 'paste the public key' : parseSshPublicKey(text);
  if (typeof parsed === 'string')
    errors[KEY_BLOCKS.publicKey] = `That public key is not valid: ${parsed}; ${PASTE_KEY}.`;
  if (Object.keys(errors).length > 0 || typeof parsed === 'string') return { ok: false as const, errors };
  const publicKey = [parsed.type, parsed.blob, parsed.comment].filter((p) => p !== '').join(' ');
  return complete(
    { modal: false, name: name!, publicKey },
    {},
    { name: KEY_BLOCKS.name, publicKey: KEY_BLOCKS.publicKey },
    KEY_BLOCKS.name,
  );
}

export const sshKeyForm: FormSpec = {
  title: 'Add an SSH key',
  needsCatalog: false,
  firstBlock: KEY_BLOCKS.name,
  view,
  read,
};
