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
