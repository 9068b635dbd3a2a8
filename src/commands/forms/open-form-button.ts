import type { Button } from '@slack/types';
import { z } from 'zod';
import { cut, plain } from './form-kit.js';
import { formKind } from './modal-metadata.js';

// A button that opens a form from a message, e.g. "Add a user…" under a Slurm cluster's user list.
// The press carries a fresh trigger id, so the form opens at once like one typed as a command.

export const OPEN_FORM_ACTION = 'gpuops.form.open';
/** Every action id of such a button: several in one block each need their own (`gpuops.form.open.create`). */
export const OPEN_FORM_ACTIONS = /^gpuops\.form\.open(\.[a-z0-9.]+)?$/;

const valueSchema = z.object({ form: formKind, cluster: z.string().min(1).max(63).optional() });
export type OpenFormValue = z.infer<typeof valueSchema>;

export function openFormButton(
  label: string,
  value: OpenFormValue,
  options: { readonly distinct?: boolean } = {},
): Button {
  return {
    type: 'button',
    action_id: options.distinct ? `${OPEN_FORM_ACTION}.${value.form}` : OPEN_FORM_ACTION,
    text: plain(cut(label, 75)),
    value: JSON.stringify(valueSchema.parse(value)),
  };
}

/** The form a button press asks for, or undefined when its value is not one of ours. */
export function readOpenFormValue(value: string | undefined): OpenFormValue | undefined {
  if (!value) return undefined;
  try {
    const parsed = valueSchema.safeParse(JSON.parse(value));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
