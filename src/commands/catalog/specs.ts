import { noArgs, paged, pagedNoArgs, simple } from '../schema-kit.js';
import { defineCommand } from '../spec.js';

const capacity = defineCommand({
  kind: 'capacity',
  group: 'catalog',
  usage: '/gpu capacity [--page N]',
  summary: 'what can be ordered now per instance type (free machines where the cloud lists them)',
  example: '/gpu capacity',
  schema: paged('capacity'),
  parse: pagedNoArgs('capacity'),
  delivery: 'ephemeral',
  operationClass: 'read',
  // Every shape: the capacity listing where the cloud has one, else the platform API's price list.
  needs: [],
});

const configs = defineCommand({
  kind: 'configs',
  group: 'catalog',
  usage: '/gpu configs',
  summary: 'GPU configurations with prices, regions and provisioning time, and the instance types to create',
  example: '/gpu configs',
  schema: simple('configs'),
  parse: noArgs('configs'),
  delivery: 'ephemeral',
  operationClass: 'read',
  // The platform API answers it in every shape.
  needs: [],
});

export const specs = [capacity, configs] as const;

/** Words people reach for that this family spells differently: offered, never silently accepted. */
export const synonyms: Readonly<Record<string, string>> = {
  config: 'configs',
  configurations: 'configs',
  prices: 'configs',
  price: 'configs',
};
