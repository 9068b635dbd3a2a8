import { z } from 'zod';

// What a form remembers between opening and submission, carried in the view's private_metadata (Slack
// gives it back untouched, up to 3,000 characters). Never a secret: it is visible to anyone who can
// read the view payload.

/** A form is named by the kind of the command it submits (`create`, `slurm.adduser`, …). */
export type FormKind = string;
/** Form kinds are command kinds: dotted lowercase words. The registry checks that one has a form. */
const formKind = z
  .string()
  .regex(/^[a-z0-9]+(?:\.[a-z0-9]+)*$/)
  .max(40);

export const MAX_METADATA = 3000;

export const modalMetadataSchema = z.object({
  v: z.literal(1),
  form: formKind,
  /** The channel the form was opened from: where the request's message goes. */
  channelId: z.string().min(1).max(64),
  projectId: z.uuid().optional(),
  responseUrl: z.url().max(1000).optional(),
  /** The cluster of a node pool or Slurm user form. */
  cluster: z.string().min(1).max(63).optional(),
  /** Prefills of `slurm adduser --form`. */
  username: z.string().max(32).optional(),
  sudo: z.boolean().optional(),
  /** The instance type a create form opens with (the waitlist's Create button). */
  type: z.string().min(1).max(63).optional(),
});
export type ModalMetadata = z.infer<typeof modalMetadataSchema>;

export { formKind };

export class FormMetadataError extends Error {
  constructor() {
    super('This form was opened by another version of gpuops; close it and open it again.');
    this.name = 'FormMetadataError';
  }
}

/** Every form's callback_id: the form kind under a prefix the submission listener matches. */
export const CALLBACK_PREFIX = 'gpuops.form.';
export const callbackIdOf = (form: FormKind): string => `${CALLBACK_PREFIX}${form}`;

export function encodeModalMetadata(metadata: ModalMetadata): string {
  const text = JSON.stringify(modalMetadataSchema.parse(metadata));
  if (text.length > MAX_METADATA) throw new Error(`form metadata is ${text.length} characters (max 3000)`);
  return text;
}

/** The metadata back from a view; a FormMetadataError when it is missing or from another version. */
export function decodeModalMetadata(text: string | undefined | null): ModalMetadata {
  if (!text) throw new FormMetadataError();
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new FormMetadataError();
  }
  const parsed = modalMetadataSchema.safeParse(raw);
  if (!parsed.success) throw new FormMetadataError();
  return parsed.data;
}
