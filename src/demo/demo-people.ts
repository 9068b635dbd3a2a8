import type { DirectoryUser } from '../chat/local-slack-api.js';

// Who is in the demo's workspace, and what each is for. Ada asks, Bob approves (and is the admin),
// Carol may only look. Their Slack profiles are what `/gpu slurm adduser` derives a username from;
// their time zones are where `/gpu schedules` shows each one the next runs.

export const DEMO_TEAM_ID = 'T0DEMO';
export const DEMO_BOT_USER_ID = 'U0GPUOPS';
export const DEMO_BOT_ID = 'B0GPUOPS';

export const ADA = 'U0ADA';
export const BOB = 'U0BOB';
export const CAROL = 'U0CAROL';

export const DEMO_PEOPLE: readonly DirectoryUser[] = [
  { id: ADA, name: 'ada', realName: 'Augusta Ada King', displayName: 'Ada Lovelace', tz: 'Europe/London' },
  { id: BOB, name: 'bob', realName: 'Robert Noyce', displayName: 'Bob Noyce', tz: 'America/New_York' },
  { id: CAROL, name: 'carol', realName: 'Carol Shaw', displayName: 'Carol Shaw', tz: 'Asia/Tokyo' },
];

export const DEMO_ROLES: Readonly<Record<string, string>> = {
  [ADA]: 'requester: an operator, who may start, stop and create; costly requests wait for an approver',
  [BOB]: 'approver and admin',
  [CAROL]: 'viewer: may look, not change',
};

export const DEMO_CHANNEL = 'C0GPUOPS';

/** Channel id → name. Any other channel id works too (`/channel C0NEW`). */
export const DEMO_CHANNELS: Readonly<Record<string, string>> = {
  [DEMO_CHANNEL]: 'gpu-ops',
  C0OPS: 'ops',
  C0ML: 'ml-research',
};
