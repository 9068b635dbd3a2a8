import type { FakeUser } from '../../src/devkit/slack/types.js';

// The people of a benchmark's workspace: a workspace has a few people sending many commands, and the
// fake Slack knows them (users.info answers), as Slack would.

/** The id of the i-th person. */
export function benchPersonId(i: number): string {
  return `UP${i}`;
}

/** The first `count` people, for FakeSlackApi.start({ users }). */
export function benchPeople(count: number): FakeUser[] {
  return Array.from({ length: count }, (_, i) => ({ id: benchPersonId(i), name: `person${i}`, tz: 'UTC' }));
}
