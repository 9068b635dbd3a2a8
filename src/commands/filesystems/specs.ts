import { z } from 'zod';
import { checkSize, SIZE_RULE } from '../../cloud/rules.js';
import { type ArgReader, shown } from '../arg-reader.js';
import { lookupNeed, name, onName, paged, pagedNoArgs, ruled } from '../schema-kit.js';
import { defineCommand } from '../spec.js';

const fs = defineCommand({
  kind: 'fs',
  group: 'fs',
  usage: '/gpu fs [--page N]',
  summary: 'list filesystems',
  example: '/gpu fs',
  schema: paged('fs'),
  parse: pagedNoArgs('fs'),
  delivery: 'ephemeral',
  operationClass: 'read',
  needs: ['listFilesystems'],
});

const fsShow = defineCommand({
  kind: 'fs.show',
  group: 'fs',
  usage: '/gpu fs show <name|id>',
  summary: 'details of one filesystem: size, state and id',
  example: '/gpu fs show datasets',
  schema: onName('fs.show', 'name'),
  parse: (r) => ({ kind: 'fs.show', name: r.onlyName('the filesystem name or id') }),
  refers: (c) => [{ what: 'filesystem', ref: c.name }],
  delivery: 'ephemeral',
  operationClass: 'read',
  needs: ['getFilesystem'],
  // A name needs the listing; where the cloud cannot list (B), the id from `fs create` still works.
  needsFor: (c) => lookupNeed(c.name, 'listFilesystems', 'filesystem'),
});

const fsCreate = defineCommand({
  kind: 'fs.create',
  group: 'fs',
  usage: '/gpu fs create <name> <size>',
  summary: 'create a filesystem (size like 512Gi or 1Ti)',
  example: '/gpu fs create datasets 512Gi',
  schema: z.object({ kind: z.literal('fs.create'), name, size: ruled(checkSize, SIZE_RULE) }),
  parse(r: ArgReader) {
    const a = r.args();
    const fsName = r.name(a.positionals[0], 'a name for the filesystem');
    const size = a.positionals[1];
    if (size === undefined) r.fail(`${r.label()} needs a size after the name, like 512Gi`);
    if (checkSize(size) !== null) r.fail(`${shown(size)} is not a valid size: ${SIZE_RULE}`);
    r.noMore(a, 2);
    return { kind: 'fs.create', name: fsName, size };
  },
  delivery: 'channel',
  operationClass: 'create',
  needs: ['createFilesystem'],
  creates: { what: 'filesystems', list: 'listFilesystems', remove: 'deleteFilesystem' },
});

const fsRm = defineCommand({
  kind: 'fs.rm',
  group: 'fs',
  usage: '/gpu fs rm <name>',
  summary: 'delete a filesystem',
  example: '/gpu fs rm datasets',
  schema: onName('fs.rm', 'name'),
  parse: (r) => ({ kind: 'fs.rm', name: r.onlyName('the filesystem name') }),
  refers: (c) => [{ what: 'filesystem', ref: c.name }],
  delivery: 'channel',
  operationClass: 'destroy',
  needs: ['deleteFilesystem'],
  needsFor: (c) => lookupNeed(c.name, 'listFilesystems', 'filesystem'),
});

export const specs = [fs, fsShow, fsCreate, fsRm] as const;

/** Words people reach for that this family spells differently: offered, never silently accepted. */
export const synonyms: Readonly<Record<string, string>> = { filesystem: 'fs', filesystems: 'fs' };
