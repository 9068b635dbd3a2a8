import { noArgs, simple } from '../schema-kit.js';
import { defineDirectCommand } from '../spec.js';

const jobs = defineDirectCommand({
  kind: 'jobs',
  group: 'observe',
  usage: '/gpu jobs',
  summary: "this channel's recent jobs and their state",
  example: '/gpu jobs',
  schema: simple('jobs'),
  parse: noArgs('jobs'),
  delivery: 'direct',
  operationClass: 'read',
  needs: [],
});

export const specs = [jobs] as const;

/** Words people reach for that this family spells differently: offered, never silently accepted. */
export const synonyms: Readonly<Record<string, string>> = { job: 'jobs' };
