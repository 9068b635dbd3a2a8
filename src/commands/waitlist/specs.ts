import { z } from 'zod';
import type { ArgReader } from '../arg-reader.js';
import { count, name, onName, simple } from '../schema-kit.js';
import { defineDirectCommand } from '../spec.js';
import { MAX_WAITLIST_COUNT } from '../value-rules.js';

const waitlist = defineDirectCommand({
  kind: 'waitlist',
  group: 'observe',
  usage: '/gpu waitlist',
  summary: "this channel's capacity waitlist",
  example: '/gpu waitlist',
  schema: simple('waitlist'),
  // `/gpu waitlist <type> [<count>]` adds: any word but rm is the type.
  freeWords: true,
  parse(r: ArgReader) {
    const a = r.args();
    const [first, second] = a.positionals;
    if (first === undefined) return { kind: 'waitlist' };
    r.enter('waitlist.add');
    const type = r.name(first, 'instance type');
    const machines = second === undefined ? 1 : r.count(second, MAX_WAITLIST_COUNT, 'number of machines');
    r.noMore(a, 2);
    return { kind: 'waitlist.add', type, count: machines };
  },
  delivery: 'direct',
  operationClass: 'operate',
  needs: [],
});

const waitlistAdd = defineDirectCommand({
  kind: 'waitlist.add',
  group: 'observe',
  words: 'waitlist',
  usage: '/gpu waitlist <type> [<count>]',
  summary: 'be told when this many machines of a type are free (default 1)',
  example: '/gpu waitlist h100-hgx-80gb.8x 2',
  schema: z.object({ kind: z.literal('waitlist.add'), type: name, count: count(MAX_WAITLIST_COUNT) }),
  // Answered by the listener, which refuses a type the cloud does not sell as create does.
  refers: (c) => [{ what: 'type', ref: c.type }],
  delivery: 'direct',
  operationClass: 'operate',
  // Every shape: the capacity listing where the cloud has one, else the price list (docs/watch.md).
  needs: [],
});

const waitlistRm = defineDirectCommand({
  kind: 'waitlist.rm',
  group: 'observe',
  usage: '/gpu waitlist rm <id>',
  summary: 'leave the waitlist',
  example: '/gpu waitlist rm w-3f9a',
  schema: onName('waitlist.rm', 'id'),
  parse(r: ArgReader) {
    const a = r.args();
    const id = r.name(a.positionals[0], 'the waitlist entry id');
    r.noMore(a, 1);
    return { kind: 'waitlist.rm', id };
  },
  delivery: 'direct',
  operationClass: 'operate',
  needs: [],
});

export const specs = [waitlist, waitlistAdd, waitlistRm] as const;
