import { checkUsername } from '../../cloud/rules.js';
import { escapeText } from '../../render/job-message.js';
import {
  checkboxesInput,
  complete,
  context,
  type FormContext,
  type FormSpec,
  type FormValues,
  formModal,
  readSelectedMany,
  readText,
  textInput,
} from './form-kit.js';

// `/gpu slurm adduser <c> --form`: join a Slurm cluster with the SSH keys you own, choosing the username
// and sudo here. It makes the same command as the typed form of the subcommand.

export const SLURM_USER_BLOCKS = { username: 'username', sudo: 'sudo' } as const;
const B = SLURM_USER_BLOCKS;

function keysLine(keys: readonly string[] | undefined): string {
  if (keys === undefined) return '';
  if (keys.length === 0) {
    return ':warning: You own no SSH keys in gpuops yet, and a Slurm user needs one: add yours with `/gpu keys add` first.';
  }
  const names = keys.slice(0, 20).map((k) => `\`${escapeText(k)}\``);
  return `You join with your SSH keys: ${names.join(', ')}${keys.length > 20 ? ` and ${keys.length - 20} more` : ''}.`;
}

function view(ctx: FormContext) {
  const blocks = [
    context(`Slurm cluster *${escapeText(ctx.metadata.cluster ?? '?')}*`),
    ...(ctx.ownedKeys !== undefined ? [context(keysLine(ctx.ownedKeys))] : []),
    textInput(B.username, 'Username', {
      optional: true,
      placeholder: 'from your Slack profile when empty',
      hint: 'Lowercase letters, digits, _ or -, starting with a letter or _; 32 at most.',
      initial: ctx.metadata.username,
      maxLength: 32,
    }),
    checkboxesInput(
      B.sudo,
      'Rights',
      [{ text: 'sudo', value: 'sudo', description: 'may run commands as root' }],
      {
        initial: ctx.metadata.sudo ? ['sudo'] : [],
      },
    ),
  ];
  return formModal(slurmUserForm, ctx.metadata, blocks, 'Add me');
}

function read(values: FormValues, ctx: FormContext) {
  const username = readText(values, B.username);
  if (username !== undefined && checkUsername(username) !== null) {
    return { ok: false as const, errors: { [B.username]: `${checkUsername(username)}.` } };
  }
  const cluster = ctx.metadata.cluster;
  if (cluster === undefined) {
    return { ok: false as const, errors: { [B.username]: 'This form lost its cluster; open it again.' } };
  }
  const command = {
    cluster,
    sudo: readSelectedMany(values, B.sudo).includes('sudo'),
    ...(username !== undefined ? { username } : {}),
  };
  return complete(command, {}, { username: B.username, sudo: B.sudo }, B.username);
}

export const slurmUserForm: FormSpec = {
  title: 'Add a Slurm user',
  needsCatalog: false,
  needsOwnKeys: true,
  firstBlock: B.username,
  view,
  read,
};
