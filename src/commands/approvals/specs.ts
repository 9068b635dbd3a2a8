import { noArgs, simple } from '../schema-kit.js';
import { defineDirectCommand } from '../spec.js';

const approvals = defineDirectCommand({
  kind: 'approvals',
  group: 'observe',
  usage: '/gpu approvals',
  summary: 'requests waiting for an approver',
  example: '/gpu approvals',
  schema: simple('approvals'),
  parse: noArgs('approvals'),
  delivery: 'direct',
  operationClass: 'read',
  needs: [],
});

export const specs = [approvals] as const;

/** Words people reach for that this family spells differently: offered, never silently accepted. */
export const synonyms: Readonly<Record<string, string>> = { approval: 'approvals' };
