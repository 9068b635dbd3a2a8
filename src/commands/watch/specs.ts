import { z } from 'zod';
import type { ArgReader } from '../arg-reader.js';
import { defineDirectCommand } from '../spec.js';

const watch = defineDirectCommand({
  kind: 'watch',
  group: 'observe',
  usage: '/gpu watch [on|off]',
  summary: 'post state changes and idle-GPU alerts in this channel, or show whether it does',
  example: '/gpu watch on',
  schema: z.object({ kind: z.literal('watch'), state: z.enum(['on', 'off']).optional() }),
  parse(r: ArgReader) {
    const a = r.args();
    const state = a.positionals[0];
    r.noMore(a, 1);
    return state === undefined ? { kind: 'watch' } : { kind: 'watch', state: r.onOff(state) };
  },
  delivery: 'direct',
  operationClass: 'operate',
  needs: ['listInstances'],
});

export const specs = [watch] as const;
