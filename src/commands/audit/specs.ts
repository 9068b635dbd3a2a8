import { z } from 'zod';
import type { ArgReader } from '../arg-reader.js';
import { count } from '../schema-kit.js';
import { defineDirectCommand } from '../spec.js';
import { DEFAULT_AUDIT, MAX_AUDIT } from '../value-rules.js';

const audit = defineDirectCommand({
  kind: 'audit',
  group: 'observe',
  usage: '/gpu audit [n]',
  summary: 'the last n actions (default 20, at most 500)',
  example: '/gpu audit 50',
  schema: z.object({ kind: z.literal('audit'), limit: count(MAX_AUDIT) }),
  parse(r: ArgReader) {
    const a = r.args();
    const n = a.positionals[0];
    r.noMore(a, 1);
    return {
      kind: 'audit',
      limit: n === undefined ? DEFAULT_AUDIT : r.count(n, MAX_AUDIT, 'number of entries'),
    };
  },
  delivery: 'direct',
  operationClass: 'admin',
  needs: [],
});

export const specs = [audit] as const;
