import type { KnownBlock } from '@slack/types';
import { checkImageRef, checkTagKey, toImageRef } from '../../cloud/rules.js';
import { escapeText } from '../../render/job-message.js';
import { checkName, checkTagValue } from '../value-rules.js';
import {
  catalogStatusBlocks,
  configurationBlocks,
  loadingView,
  readType,
  TYPE_BLOCK,
  TYPE_OTHER_BLOCK,
  typeBlocks,
} from './catalog-blocks.js';
import {
  checkboxesInput,
  complete,
  context,
  type FormContext,
  type FormSpec,
  type FormValues,
  formModal,
  LIMIT,
  multiSelectInput,
  readMultiline,
  readPairs,
  readSelectedMany,
  readText,
  textInput,
} from './form-kit.js';

// `/gpu create` with no arguments: prices and regions to choose from, then the fields of the
// instance. User data is the one secret here: read from the form, base64-encoded, and handed to the
// listener to seal; it never enters the command.

export const CREATE_BLOCKS = {
  name: 'name',
  type: TYPE_BLOCK,
  typeOther: TYPE_OTHER_BLOCK,
  image: 'image',
  options: 'options',
  filesystems: 'filesystems',
  filesystemsOther: 'filesystems_other',
  tags: 'tags',
  userData: 'user_data',
} as const;

const B = CREATE_BLOCKS;

function filesystemBlocks(ctx: FormContext): KnownBlock[] {
  if (ctx.filesystems === 'none') return [];
  if (ctx.filesystems === 'ids') {
    return [
      textInput(B.filesystems, 'Filesystems to attach', {
        optional: true,
        multiline: true,
        placeholder: 'Filesystem ids, one a line',
        hint: 'This cloud cannot list filesystems: give their ids (see /gpu fs create).',
      }),
    ];
  }
  const all = ctx.catalog?.catalog.filesystems ?? [];
  if (all.length === 0) {
    return [
      context('No filesystems in this project to attach; create one with `/gpu fs create <name> <size>`.'),
    ];
  }
  const choices = [...all]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((f) => ({ text: `${f.name} · ${f.size}`, value: f.id }));
  const blocks: KnownBlock[] = [
    multiSelectInput(B.filesystems, 'Filesystems to attach', choices, {
      optional: true,
      placeholder: 'Pick filesystems',
    }),
  ];
  if (choices.length > LIMIT.options) {
    blocks.push(
      textInput(B.filesystemsOther, 'Other filesystems', {
        optional: true,
        multiline: true,
        placeholder: 'Names or ids, one a line',
        hint: `${choices.length - LIMIT.options} filesystems do not fit in the list above; name them here.`,
      }),
    );
  }
  return blocks;
}

function view(ctx: FormContext) {
  if (!ctx.catalog) return loadingView(createInstanceForm, ctx);
  const blocks: KnownBlock[] = [
    ...configurationBlocks(ctx.catalog.catalog),
    ...catalogStatusBlocks(ctx),
    { type: 'divider' },
    textInput(B.name, 'Name', { placeholder: 'e.g. train-01', maxLength: 63 }),
    ...typeBlocks(ctx, 'Instance type'),
    textInput(B.image, 'Image', {
      optional: true,
      placeholder: "ubuntu22.04 (the cloud's default when empty)",
      hint: 'An image name, with or without image:// in front.',
      maxLength: 136,
    }),
    checkboxesInput(B.options, 'Options', [
      { text: 'Preemptible', value: 'preemptible', description: 'cheaper; the cloud may take it back' },
      { text: 'Ephemeral', value: 'ephemeral', description: 'its disk is not kept when it stops' },
    ]),
    ...filesystemBlocks(ctx),
    textInput(B.tags, 'Tags', {
      optional: true,
      multiline: true,
      placeholder: 'team=ml\nowner=ada',
      hint: 'key=value, one a line.',
    }),
    textInput(B.userData, 'User data (cloud-init)', {
      optional: true,
      multiline: true,
      placeholder: '#cloud-config',
      hint: 'Sent base64-encoded. Treated as a secret: sealed for at most a day until the job uses it, never shown in Slack, job data or logs.',
    }),
  ];
  return formModal(createInstanceForm, ctx.metadata, blocks, 'Create');
}

function lines(text: string | undefined): string[] {
  return (text ?? '')
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function read(values: FormValues, ctx: FormContext) {
  const errors: Record<string, string> = {};
  const name = readText(values, B.name);
  if (name === undefined) errors[B.name] = 'Give the instance a name.';
  else {
    const problem = checkName(name);
    if (problem) errors[B.name] = `${problem}.`;
  }

  const type = readType(values);
  if ('errors' in type) Object.assign(errors, type.errors);

  const imageText = readText(values, B.image);
  const image = imageText === undefined ? undefined : toImageRef(imageText);
  if (image !== undefined && checkImageRef(image) !== null) errors[B.image] = `${checkImageRef(image)}.`;

  const options = new Set(readSelectedMany(values, B.options));

  const filesystems = [
    ...new Set([
      ...(ctx.filesystems === 'pick' ? readSelectedMany(values, B.filesystems) : []),
      ...lines(readText(values, ctx.filesystems === 'ids' ? B.filesystems : B.filesystemsOther)),
    ]),
  ];
  const badFs = filesystems.find((f) => checkName(f) !== null);
  if (badFs !== undefined) {
    const block = ctx.filesystems === 'ids' ? B.filesystems : B.filesystemsOther;
    errors[block] = `"${escapeText(badFs.slice(0, 40))}" is not a filesystem name or id.`;
  }

  const tags = readPairs(readMultiline(values, B.tags), 'tag', checkTagKey, checkTagValue);
  if ('error' in tags) errors[B.tags] = tags.error;

  if (Object.keys(errors).length > 0) return { ok: false as const, errors };

  const userData = readMultiline(values, B.userData);
  const command = {
    modal: false,
    name: name!,
    type: (type as { type: string }).type,
    ...(image !== undefined ? { image } : {}),
    preemptible: options.has('preemptible'),
    ephemeral: options.has('ephemeral'),
    filesystems,
    tags: (tags as { pairs: Record<string, string> }).pairs,
  };
  const secrets =
    userData !== undefined ? { userData: Buffer.from(userData, 'utf8').toString('base64') } : {};
  return complete(
    command,
    secrets,
    { name: B.name, type: B.type, image: B.image, filesystems: B.filesystems, tags: B.tags },
    B.name,
  );
}

export const createInstanceForm: FormSpec = {
  title: 'Create an instance',
  needsCatalog: true,
  firstBlock: B.name,
  view,
  read,
};
