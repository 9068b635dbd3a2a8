import { unavailableIn } from './availability.js';
import type { FormContext, FormRead, FormValues } from './forms/form-kit.js';
import { formSpecOf, type GpuCommand, gpuCommandSchema } from './registry.js';

/**
 * A submitted form as a command, with the same last check as typed text: the grammar's schema, then
 * whether the shape can serve it. Problems land on the block that holds the field.
 */
export function readForm(kind: string, values: FormValues, ctx: FormContext): FormRead<GpuCommand> {
  const draft = formSpecOf(kind).read(values, ctx);
  if (!draft.ok) return draft;
  const { command, secrets, blockOf, fallback } = draft;
  const parsed = gpuCommandSchema.safeParse({ ...command, kind });
  if (!parsed.success) {
    const errors: Record<string, string> = {};
    for (const issue of parsed.error.issues) {
      const field = String(issue.path[0] ?? '');
      const block = blockOf[field] ?? fallback;
      errors[block] ??= `${issue.message.replace(/\.$/, '')}.`;
    }
    return { ok: false, errors };
  }
  const missing = unavailableIn(parsed.data, ctx.shape, ctx.routes);
  if (missing) {
    const block = missing.includes('--fs') ? (blockOf.filesystems ?? fallback) : fallback;
    return { ok: false, errors: { [block]: missing } };
  }
  return { ok: true, command: parsed.data, secrets };
}
