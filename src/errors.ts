// One error family for the whole app: a stable string code, a sentence a person can act on,
// and the original throwable as `cause`. Slack and logs show `message`, never a stack.
export const ErrorCode = {
  Config: 'config_invalid',
  Validation: 'validation_failed',
  CloudApi: 'cloud_api_error',
  CloudNetwork: 'cloud_network_error',
  CloudTimeout: 'cloud_timeout',
  CloudSchema: 'cloud_schema_mismatch',
  CloudUnavailable: 'cloud_not_available',
  Auth: 'auth_failed',
  Metrics: 'metrics_error',
  Unknown: 'unknown_error',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export class AppError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** Input rejected before anything was sent: names the field and the rule it broke. */
export class ValidationError extends AppError {
  readonly field: string;
  readonly rule: string;
  constructor(field: string, rule: string, message?: string) {
    super(ErrorCode.Validation, message ?? `${field}: ${rule}`);
    this.field = field;
    this.rule = rule;
  }
}

/** Normalises anything thrown into an AppError without losing the original. */
export function asAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof Error) return new AppError(ErrorCode.Unknown, err.message, { cause: err });
  return new AppError(ErrorCode.Unknown, String(err), { cause: err });
}
