// Errors raised by the simulated cloud. A kind says what went wrong; the HTTP layer turns it into the
// status the operation lists (spec: "The listed error statuses are the ones an operation can return").

export const SimErrorKind = {
  /** A request field breaks a rule, or a required field is missing. */
  Invalid: 'invalid',
  /** The addressed resource (path parameter) does not exist in the project. */
  NotFound: 'not_found',
  /** A resource named in the body does not exist (e.g. a filesystem id): a bad input first. */
  BadReference: 'bad_reference',
  /** A name that must be unique is taken. */
  Conflict: 'conflict',
  /** The resource is in a state that does not allow the action. */
  WrongState: 'wrong_state',
  /** The project exists but the caller is not a member. */
  Forbidden: 'forbidden',
  /** X-PROJECT-ID missing or not a UUID. */
  ProjectHeader: 'project_header',
  /** X-PROJECT-ID names no project. */
  UnknownProject: 'unknown_project',
} as const;
export type SimErrorKind = (typeof SimErrorKind)[keyof typeof SimErrorKind];

/** Preferred statuses in order; the first one the route lists wins, else the first of these. */
const PREFERENCE: Record<SimErrorKind, readonly number[]> = {
  invalid: [400],
  not_found: [404, 400],
  bad_reference: [400, 404],
  conflict: [409, 400],
  wrong_state: [409, 400],
  forbidden: [403, 404],
  project_header: [400, 404, 403],
  unknown_project: [404, 403, 400],
};

export class SimError extends Error {
  readonly kind: SimErrorKind;
  /** The request field at fault, when there is one (the platform API reports it in `loc`). */
  readonly field: string | undefined;
  constructor(kind: SimErrorKind, message: string, field?: string) {
    super(message);
    this.name = 'SimError';
    this.kind = kind;
    this.field = field;
  }
}

/**
 * The status for an error kind on a route: the first preferred status the route lists. When the route
 * lists none of them (e.g. shape C's list operations list only 500 and 501), the first preferred one,
 * because a 500 would tell clients to retry a request that can never succeed.
 */
export function statusFor(kind: SimErrorKind, listed: readonly number[]): number {
  const preferred = PREFERENCE[kind];
  return preferred.find((s) => listed.includes(s)) ?? preferred[0]!;
}
