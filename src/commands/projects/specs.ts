import { lookupNeed, noArgs, onName, paged, pagedNoArgs, simple } from '../schema-kit.js';
import { defineCommand, defineDirectCommand } from '../spec.js';

const projects = defineCommand({
  kind: 'projects',
  group: 'basics',
  usage: '/gpu projects [--page N]',
  summary: 'list the projects of the account',
  example: '/gpu projects',
  schema: paged('projects'),
  parse: pagedNoArgs('projects'),
  delivery: 'ephemeral',
  operationClass: 'read',
  needs: ['listProjects'],
});

const project = defineDirectCommand({
  kind: 'project',
  group: 'basics',
  usage: '/gpu project',
  summary: 'show the project this channel works in',
  example: '/gpu project',
  schema: simple('project'),
  parse: noArgs('project'),
  delivery: 'direct',
  operationClass: 'read',
  needs: [],
});

const projectUse = defineCommand({
  kind: 'project.use',
  group: 'basics',
  usage: '/gpu project use <name|id>',
  summary: 'bind this channel to a project',
  example: '/gpu project use research',
  schema: onName('project.use', 'project'),
  parse: (r) => ({ kind: 'project.use', project: r.onlyName('the project name or id') }),
  delivery: 'channel',
  operationClass: 'operate',
  needs: [],
  needsFor: (c) => lookupNeed(c.project, 'listProjects', 'project'),
});

export const specs = [projects, project, projectUse] as const;

/** Words people reach for that this family spells differently: offered, never silently accepted. */
export const synonyms: Readonly<Record<string, string>> = { project: 'projects' };
