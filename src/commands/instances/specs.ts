import { z } from 'zod';
import { checkImageRef, DEFAULT_IMAGE, toImageRef } from '../../cloud/rules.js';
import { type ArgReader, shown } from '../arg-reader.js';
import { createInstanceForm } from '../forms/create-instance-modal.js';
import { isId, lookupNeed, modal, name, onName, paged, pagedNoArgs, ruled, tags } from '../schema-kit.js';
import { defineCommand } from '../spec.js';
import { checkTagKey, checkTagValue } from '../value-rules.js';

const INSTANCE = 'the instance name or id';

const ls = defineCommand({
  kind: 'ls',
  group: 'instances',
  usage: '/gpu ls [--page N]',
  summary: 'list the instances of the project',
  example: '/gpu ls',
  schema: paged('ls'),
  parse: pagedNoArgs('ls'),
  notes:
    'A list longer than 20 lines shows one page at a time, with Previous and Next buttons under it: a press lists that page again, as the person who pressed, in place of the list. `--page N` asks for a page directly; a page past the end shows the last one and says so. Every list whose usage shows `[--page N]` works the same.',
  delivery: 'ephemeral',
  operationClass: 'read',
  needs: ['listInstances'],
});

const show = defineCommand({
  kind: 'show',
  group: 'instances',
  usage: '/gpu show <instance>',
  summary: 'details of one instance',
  example: '/gpu show train-01',
  schema: onName('show', 'instance'),
  parse: (r) => ({ kind: 'show', instance: r.onlyName(INSTANCE) }),
  delivery: 'ephemeral',
  operationClass: 'read',
  needs: ['getInstance'],
  needsFor: (c) => lookupNeed(c.instance, 'listInstances', 'instance'),
  effects: (c) => ({ target: { instance: c.instance } }),
});

export const createArgsSchema = z.object({
  kind: z.literal('create'),
  modal: z.literal(false),
  name,
  type: name,
  /** Full image reference (image://…); absent means the cloud's default, DEFAULT_IMAGE. */
  image: ruled(checkImageRef, `${DEFAULT_IMAGE}-like image reference`).optional(),
  preemptible: z.boolean(),
  ephemeral: z.boolean(),
  /** Filesystem names or ids, each once. */
  filesystems: z.array(name),
  tags,
});

const create = defineCommand({
  kind: 'create',
  group: 'instances',
  usage:
    '/gpu create [<name> <type> [--image I] [--preemptible] [--ephemeral] [--fs <name>]... [--tag k=v]...]',
  summary: 'create an instance; with no arguments a form with configurations and prices',
  example: '/gpu create train-01 h100-hgx-80gb.1x --image ubuntu22.04 --tag team=vision',
  schema: z.discriminatedUnion('modal', [modal('create'), createArgsSchema]),
  parse(r: ArgReader) {
    const a = r.args({ image: 'value', preemptible: 'bool', ephemeral: 'bool', fs: 'multi', tag: 'multi' });
    const flagged = Object.keys(a.values).length + Object.keys(a.bools).length > 0;
    if (a.positionals.length === 0 && !flagged) return { kind: 'create', modal: true };
    const instance = r.name(a.positionals[0], 'a name for the instance');
    const type = r.name(a.positionals[1], 'the instance type after the name');
    r.noMore(a, 2);
    const imageText = a.values.image?.[0];
    let image: string | undefined;
    if (imageText !== undefined) {
      image = toImageRef(imageText);
      const rule = checkImageRef(image);
      if (rule !== null) r.fail(`${shown(imageText)} is not a valid image: ${rule}`);
    }
    const filesystems = [...new Set((a.values.fs ?? []).map((fs) => r.name(fs, 'filesystem name')))];
    const tagged: Record<string, string> = {};
    for (const pair of a.values.tag ?? []) {
      const [key, value] = r.pair(pair, '--tag', checkTagKey, checkTagValue);
      if (Object.hasOwn(tagged, key)) r.fail(`The tag ${shown(key)} was given twice; give each key once`);
      tagged[key] = value;
    }
    return {
      kind: 'create',
      modal: false,
      name: instance,
      type,
      ...(image !== undefined ? { image } : {}),
      preemptible: a.bools.preemptible ?? false,
      ephemeral: a.bools.ephemeral ?? false,
      filesystems,
      tags: tagged,
    };
  },
  delivery: 'channel',
  operationClass: 'create',
  needs: ['createInstance'],
  creates: { what: 'instances', list: 'listInstances', remove: 'deleteInstance' },
  // One machine of its type, under a new name (not looked up): the type must be sold, and it is leased.
  effects: (c) => (c.modal ? {} : { launches: { type: c.type, count: 1, instance: c.name } }),
  refers: (c) => (c.modal ? [] : c.filesystems.map((fs) => ({ what: 'filesystem' as const, ref: fs }))),
  needsFor(c) {
    if (c.modal || c.filesystems.length === 0) return [];
    return [
      {
        requirement: 'getFilesystem',
        path: 'create --fs',
        hint: 'Instances here take no filesystems; leave out --fs.',
      },
      ...(c.filesystems.some((fs) => !isId(fs))
        ? [
            {
              requirement: 'listFilesystems' as const,
              path: 'create --fs',
              hint: 'Give filesystem ids instead of names.',
            },
          ]
        : []),
    ];
  },
  form: { spec: createInstanceForm },
  notes:
    "`--image` takes a bare image name (`ubuntu22.04`) or a full reference (`image://ubuntu22.04`); without it the cloud's default image is used. `--preemptible` and `--ephemeral` are switches (`--preemptible=false` is accepted too). `--fs` and `--tag` may repeat; a filesystem named twice is attached once, a tag key given twice is an error.",
});

const start = defineCommand({
  kind: 'start',
  group: 'instances',
  usage: '/gpu start <instance>',
  summary: 'start a stopped instance',
  example: '/gpu start train-01',
  schema: onName('start', 'instance'),
  parse: (r) => ({ kind: 'start', instance: r.onlyName(INSTANCE) }),
  delivery: 'channel',
  operationClass: 'operate',
  needs: ['startInstance'],
  needsFor: (c) => lookupNeed(c.instance, 'listInstances', 'instance'),
  effects: (c) => ({ target: { instance: c.instance, does: 'starts' } }),
});

const stop = defineCommand({
  kind: 'stop',
  group: 'instances',
  usage: '/gpu stop <instance>',
  summary: 'stop a running instance',
  example: '/gpu stop train-01',
  schema: onName('stop', 'instance'),
  parse: (r) => ({ kind: 'stop', instance: r.onlyName(INSTANCE) }),
  delivery: 'channel',
  operationClass: 'operate',
  needs: ['stopInstance'],
  needsFor: (c) => lookupNeed(c.instance, 'listInstances', 'instance'),
  effects: (c) => ({ target: { instance: c.instance, does: 'stops' } }),
});

const rm = defineCommand({
  kind: 'rm',
  group: 'instances',
  usage: '/gpu rm <instance>',
  summary: 'delete an instance',
  example: '/gpu rm train-01',
  schema: onName('rm', 'instance'),
  parse: (r) => ({ kind: 'rm', instance: r.onlyName(INSTANCE) }),
  delivery: 'channel',
  operationClass: 'destroy',
  needs: ['deleteInstance'],
  needsFor: (c) => lookupNeed(c.instance, 'listInstances', 'instance'),
  effects: (c) => ({ target: { instance: c.instance, does: 'destroys' } }),
});

export const specs = [ls, show, create, start, stop, rm] as const;

/** Words people reach for that this family spells differently: offered, never silently accepted. */
export const synonyms: Readonly<Record<string, string>> = {
  list: 'ls',
  get: 'show',
  describe: 'show',
  info: 'show',
  status: 'show',
  delete: 'rm',
  del: 'rm',
  remove: 'rm',
  destroy: 'rm',
  terminate: 'rm',
  new: 'create',
  launch: 'create',
  run: 'create',
  add: 'create',
  boot: 'start',
  resume: 'start',
  halt: 'stop',
  shutdown: 'stop',
};
