import { PermanentJobError } from './job-errors.js';

/**
 * The command with its arguments: a form-opening request (`modal: true`) reaches a worker only with its
 * fields filled in, so one without them is refused with what to do rather than retried.
 */
export function withArguments<C extends { readonly modal: boolean }>(
  command: C,
): Extract<C, { modal: false }> {
  if (command.modal) {
    throw new PermanentJobError(
      'This request arrived without its arguments; send it again with them (see /gpu help for the syntax).',
    );
  }
  return command as Extract<C, { modal: false }>;
}
