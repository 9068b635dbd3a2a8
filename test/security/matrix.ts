// The security matrix as data: every door a person can reach gpuops through, every trick an attacker
// would try at it, and what must happen. Each applicable cell is one test (test/security/*.test.ts runs
// the cells of its doors); a cell that does not apply says why. docs/security.md shows this table,
// generated from here (`npm run docs:security`; test/security/matrix-doc.test.ts keeps them equal).

export const DOORS = [
  { id: 'slash', label: 'Slash command (`/gpu …`)' },
  { id: 'form', label: 'Form submission' },
  { id: 'approval', label: 'Approval card buttons' },
  { id: 'home', label: 'Home tab buttons' },
  { id: 'idle-lease', label: 'Idle-alert and lease buttons' },
  { id: 'list-page', label: 'List page buttons' },
  { id: 'step:create_instance', label: 'Step: create instance' },
  { id: 'step:start_instance', label: 'Step: start instance' },
  { id: 'step:stop_instance', label: 'Step: stop instance' },
  { id: 'step:add_slurm_user', label: 'Step: add Slurm user' },
  { id: 'step:get_capacity', label: 'Step: capacity' },
  { id: 'schedule', label: 'Schedule firing' },
] as const;
export type DoorId = (typeof DOORS)[number]['id'];

export const TRICKS = [
  { id: 'impersonate', label: 'acting as another person' },
  { id: 'guest', label: 'a guest' },
  { id: 'other-workspace', label: "another workspace's member" },
  { id: 'deactivated', label: 'a deactivated person' },
  { id: 'channel-grant', label: 'a channel grant without being in the channel' },
  { id: 'self-approval', label: 'self-approval' },
  { id: 'replay-30s', label: 'replay after 30 s' },
  { id: 'replay-5min', label: 'replay after 5 minutes' },
  { id: 'door-switch', label: 'switching doors to escape the rate limit' },
] as const;
export type TrickId = (typeof TRICKS)[number]['id'];

/**
 * What must happen: `refused` — one sentence to the person, nothing changes in the cloud, and a
 * `refused` entry on the audit trail when `audited`; `unsigned` — the request never reaches a listener
 * (Bolt answers 401: the signature no longer matches, or it is older than five minutes), nothing
 * changes; `dropped` — a replay runs nothing a second time (no sentence needed); `n/a` — with the reason.
 */
export type Expected =
  | { readonly outcome: 'refused'; readonly audited: boolean; readonly how: string }
  | { readonly outcome: 'unsigned'; readonly how: string }
  | { readonly outcome: 'dropped'; readonly how: string }
  | { readonly outcome: 'n/a'; readonly why: string };

export interface Cell {
  readonly door: DoorId;
  readonly trick: TrickId;
  readonly expected: Expected;
}

const refused = (how: string, audited = true): Expected => ({ outcome: 'refused', audited, how });
const na = (why: string): Expected => ({ outcome: 'n/a', why });

const SIGNED_PERSON =
  'the person is the user Slack signed into the payload: edited to name an admin, the signature no longer matches';
const STALE = 'Slack signs a timestamp: a request older than five minutes is rejected before any listener';
const GATE = (who: string) => `refused by the access gate before any listener: ${who}`;
const RATE =
  'after typed commands used up the person’s rate limit, this door is refused with the same sentence';

/** What every Slack-signed door (a payload with a person in it) gets for the person-based tricks. */
function signedDoor(
  door: DoorId,
): Record<'impersonate' | 'guest' | 'other-workspace' | 'deactivated' | 'replay-5min', Expected> {
  void door;
  return {
    impersonate: { outcome: 'unsigned', how: SIGNED_PERSON },
    guest: refused(GATE('a guest account (users.info is_restricted)')),
    'other-workspace': refused(GATE('a member of another workspace (users.info team_id)')),
    deactivated: refused(GATE('a deactivated account (users.info deleted)')),
    'replay-5min': { outcome: 'unsigned', how: STALE },
  };
}

const STEP_SPECIFIC: Record<
  | 'impersonate'
  | 'guest'
  | 'other-workspace'
  | 'deactivated'
  | 'channel-grant'
  | 'replay-30s'
  | 'replay-5min'
  | 'door-switch',
  Expected
> = {
  impersonate: refused(
    'the builder typed an admin into user_id and user_context; the step acts as the person Slack filled in, a viewer',
  ),
  guest: refused('the person who used the workflow is a guest'),
  'other-workspace': refused('the person who used the workflow belongs to another workspace'),
  deactivated: refused('the person who used the workflow is deactivated'),
  'channel-grant': refused(
    "the step's channel_id names a channel that grants operator: it lends a step no role",
  ),
  'replay-30s': {
    outcome: 'dropped',
    how: 'the same signed function_executed event sent again after the 30 s dedupe runs nothing twice',
  },
  'replay-5min': { outcome: 'unsigned', how: STALE },
  'door-switch': refused(RATE, false),
};

const CELLS_BY_DOOR: Record<DoorId, Record<TrickId, Expected>> = {
  slash: {
    ...signedDoor('slash'),
    'channel-grant': na(
      'Slack delivers a slash command from the conversation it was typed in, so the person is in that channel and its grant is theirs to use',
    ),
    'self-approval': na('typing asks for something; deciding it is the approval card’s door'),
    'replay-30s': {
      outcome: 'dropped',
      how: 'the trigger id is claimed for the whole signature window: a create sent again makes no second machine',
    },
    'door-switch': refused('after list-page presses used up the rate limit, typing is refused too', false),
  },
  form: {
    ...signedDoor('form'),
    'channel-grant': na(
      'a form’s channel is the one it was opened from, written by gpuops into the view that Slack keeps; nobody can submit it for another channel',
    ),
    'self-approval': na('submitting asks for something; deciding it is the approval card’s door'),
    'replay-30s': {
      outcome: 'dropped',
      how: 'the same signed view_submission sent again after the 30 s dedupe makes no second machine',
    },
    'door-switch': refused(RATE, false),
  },
  approval: {
    ...signedDoor('approval'),
    'channel-grant': refused(
      'Approve pressed on the Home tab by a viewer outside the approvals channel that grants admin: the grant counts only for a click in that channel',
    ),
    'self-approval': refused('an approver presses Approve on their own request'),
    'replay-30s': {
      outcome: 'dropped',
      how: 'the signed Approve sent again after the 30 s dedupe queues no second job',
    },
    'door-switch': na(
      'a decision is not a request of the clicker’s: it starts nothing of theirs and is not counted (the request it decides was)',
    ),
  },
  home: {
    ...signedDoor('home'),
    'channel-grant': refused(
      'Stop pressed on the Home tab by a viewer, the button naming a channel that grants operator: nothing was clicked in that channel',
    ),
    'self-approval': refused('an approver presses Approve on their own request on the Home tab'),
    'replay-30s': {
      outcome: 'dropped',
      how: 'a Stop press sent again after the machine was started again stops nothing',
    },
    'door-switch': refused(RATE, false),
  },
  'idle-lease': {
    ...signedDoor('idle-lease'),
    'channel-grant': refused(
      "Extend pressed by a viewer on someone else's lease whose channel grants admin: only the channel clicked in counts",
    ),
    'self-approval': refused(
      'the owner extends their own lease past lease.max_total, which only someone else who may approve can do',
    ),
    'replay-30s': {
      outcome: 'dropped',
      how: "an idle alert's Stop sent again after the machine was started again stops nothing",
    },
    'door-switch': refused(RATE, false),
  },
  'list-page': {
    ...signedDoor('list-page'),
    'channel-grant': na(
      'the press comes from the list’s message in its channel, as Slack’s payload says: the person is there',
    ),
    'self-approval': na('a list page asks for nothing to approve'),
    'replay-30s': {
      outcome: 'dropped',
      how: 'a Next press sent again after the 30 s dedupe runs no second listing',
    },
    'door-switch': refused(RATE, false),
  },
  'step:create_instance': {
    ...STEP_SPECIFIC,
    'self-approval': refused(
      'an approver’s costly create step waits for approval; their own Approve is refused',
    ),
  },
  'step:start_instance': {
    ...STEP_SPECIFIC,
    'self-approval': na(
      'a start of this cheap machine waits for no approval; the card a step makes is proven on create',
    ),
  },
  'step:stop_instance': {
    ...STEP_SPECIFIC,
    'self-approval': na('a stop waits for no approval under the policy'),
  },
  'step:add_slurm_user': {
    ...STEP_SPECIFIC,
    'self-approval': na('adding oneself waits for no approval under the policy'),
  },
  'step:get_capacity': {
    ...STEP_SPECIFIC,
    impersonate: na(
      'a read every member may make: the step runs as the person Slack filled in, and naming someone else gains nothing',
    ),
    'channel-grant': na('a read every member may make: a channel’s role could add nothing'),
    'self-approval': na('a read waits for no approval'),
  },
  schedule: {
    impersonate: refused(
      'a tag schedule made by an operator fires on a machine someone else made later with the tag: it acts only on machines its owner may operate',
    ),
    guest: refused('the schedule’s owner became a guest: the firing pauses it and tells its channel'),
    'other-workspace': refused('the schedule’s owner now belongs to another workspace: the firing pauses it'),
    deactivated: refused('the schedule’s owner was deactivated: the firing pauses it'),
    'channel-grant': refused(
      'a viewer types a schedule in a channel that grants operator: it would act later, typed nowhere, so it is made on the viewer’s own roles and refused; one stored for that channel anyway fires refused on the owner’s own role, and its channel is told',
    ),
    'self-approval': na(
      'a firing asks nobody; above its approved ceiling it asks for approval again on the card',
    ),
    'replay-30s': na(
      'a firing is a job on the queue in Redis, not a signed request; one fire time makes one job',
    ),
    'replay-5min': na('a firing is a job on the queue in Redis, not a signed request'),
    'door-switch': na(
      'by design a firing is not counted against its owner’s rate limit (a tag schedule on forty machines must not stop at the thirtieth); the owner typed the schedule, and that request was counted',
    ),
  },
};

export const CELLS: readonly Cell[] = DOORS.flatMap((door) =>
  TRICKS.map((trick) => ({ door: door.id, trick: trick.id, expected: CELLS_BY_DOOR[door.id][trick.id] })),
);

/** The applicable cells of some doors, for `it.each`: `door × trick` names the test. */
export function cellsOf(doors: readonly DoorId[]): Array<Cell & { readonly name: string }> {
  return CELLS.filter((c) => doors.includes(c.door) && c.expected.outcome !== 'n/a').map((c) => ({
    ...c,
    name: `${c.door} × ${c.trick}: ${c.expected.outcome}`,
  }));
}

const SHORT: Record<Expected['outcome'], string> = {
  refused: 'refused',
  unsigned: '401',
  dropped: 'dropped',
  'n/a': 'n/a',
};

/** The matrix as docs/security.md shows it: a grid, then what each cell means. */
export function renderMatrix(): string {
  const head = `| door | ${TRICKS.map((t) => t.label).join(' | ')} |`;
  const rule = `|---|${TRICKS.map(() => '---').join('|')}|`;
  const rows = DOORS.map((d) => {
    const cells = TRICKS.map((t) => {
      const e = CELLS_BY_DOOR[d.id][t.id];
      return e.outcome === 'refused' && e.audited ? 'refused, audited' : SHORT[e.outcome];
    });
    return `| ${d.label} | ${cells.join(' | ')} |`;
  });
  const notes = DOORS.flatMap((d) =>
    TRICKS.map((t) => {
      const e = CELLS_BY_DOOR[d.id][t.id];
      const text = e.outcome === 'n/a' ? e.why : e.how;
      return `- **${d.label} × ${t.label}** (${SHORT[e.outcome]}): ${text}.`;
    }),
  );
  return [head, rule, ...rows, '', ...notes, ''].join('\n');
}
