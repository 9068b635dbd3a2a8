import type {
  Checkboxes,
  ContextBlock,
  InputBlock,
  KnownBlock,
  ModalView,
  MultiStaticSelect,
  NumberInput,
  PlainTextInput,
  PlainTextOption,
  SectionBlock,
  StaticSelect,
} from '@slack/types';
import type { RouteTable } from '../../cloud/routes.js';
import type { Shape } from '../../cloud/shape.js';
import type { Catalog } from '../../store/catalog-cache.js';
import { callbackIdOf, encodeModalMetadata, type ModalMetadata } from './modal-metadata.js';

// The parts every form is made of: input builders within Slack's limits, readers of a submission's
// state, and the last check that turns fields into the same typed command `/gpu …` text would give.

/** Every input element uses this action id; the block id names the field. */
export const FIELD_ACTION = 'value';

export const LIMIT = {
  title: 24,
  optionText: 75,
  options: 100,
  placeholder: 150,
  plainTextInput: 3000,
  sectionText: 3000,
} as const;

/** One element's state in a view_submission (the subset forms read). */
export interface FormStateValue {
  readonly type: string;
  readonly value?: string | null;
  readonly selected_option?: { readonly value: string } | null;
  readonly selected_options?: readonly { readonly value: string }[];
}
/** view.state.values: block id → action id → state. */
export type FormValues = Readonly<Record<string, Readonly<Record<string, FormStateValue>>>>;

/** Secrets read from a form: sealed by the listener, never put in the command. */
export interface FormSecrets {
  readonly userData?: string;
  readonly kubeconfig?: string;
}

/** What a form's fields make: a command without its kind (the form's), before the schema checks it. */
export type FormCommand = Readonly<Record<string, unknown>>;

/** A form's reading of its fields, which the registry then checks like typed text (read-form.ts). */
export type FormDraft =
  | {
      readonly ok: true;
      readonly command: FormCommand;
      readonly secrets: FormSecrets;
      /** The block that holds each field, where a problem with it is shown. */
      readonly blockOf: Readonly<Record<string, string>>;
      readonly fallback: string;
    }
  | { readonly ok: false; readonly errors: Readonly<Record<string, string>> };

export type FormRead<C = FormCommand> =
  | { readonly ok: true; readonly command: C; readonly secrets: FormSecrets }
  | { readonly ok: false; readonly errors: Readonly<Record<string, string>> };

/** How the create form offers filesystems: a pick list (the cloud lists them), ids typed in, or none. */
export type FilesystemField = 'pick' | 'ids' | 'none';

export function filesystemFieldFor(
  has: (op: 'listFilesystems' | 'getFilesystem') => boolean,
): FilesystemField {
  if (has('listFilesystems')) return 'pick';
  return has('getFilesystem') ? 'ids' : 'none';
}

export interface FormContext {
  readonly metadata: ModalMetadata;
  readonly shape: Shape;
  readonly routes: RouteTable;
  readonly filesystems: FilesystemField;
  /** The cached catalogue; absent means the form opens in its loading state (forms that need it). */
  readonly catalog?: { readonly catalog: Catalog; readonly storedAt: number } | undefined;
  /** SSH keys the requester owns (the Slurm user form). */
  readonly ownedKeys?: readonly string[] | undefined;
  readonly now: number;
}

export interface FormSpec {
  readonly title: string;
  /** True when the form lists catalogue data, so it opens in a loading state without it. */
  readonly needsCatalog: boolean;
  /** True when the form lists the requester's own SSH keys (read from the store before it opens). */
  readonly needsOwnKeys?: boolean;
  /** The block a problem with the whole request is shown on. */
  readonly firstBlock: string;
  view(ctx: FormContext): ModalView;
  read(values: FormValues, ctx: FormContext): FormDraft;
}

// ---------- text ----------

export const plain = (text: string) => ({ type: 'plain_text' as const, text, emoji: true });

/** Cuts text to `max` characters, marking the cut. */
export function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

export function section(text: string): SectionBlock {
  return { type: 'section', text: { type: 'mrkdwn', text: cut(text, LIMIT.sectionText) } };
}

export function context(text: string): ContextBlock {
  return { type: 'context', elements: [{ type: 'mrkdwn', text: cut(text, LIMIT.sectionText) }] };
}

// ---------- inputs ----------

interface InputOptions {
  readonly optional?: boolean;
  readonly hint?: string;
}

function input(blockId: string, label: string, element: InputBlock['element'], o: InputOptions): InputBlock {
  return {
    type: 'input',
    block_id: blockId,
    label: plain(cut(label, 2000)),
    element,
    optional: o.optional ?? false,
    ...(o.hint ? { hint: plain(cut(o.hint, 2000)) } : {}),
  };
}

export function textInput(
  blockId: string,
  label: string,
  o: InputOptions & {
    readonly multiline?: boolean;
    readonly placeholder?: string;
    readonly initial?: string | undefined;
    readonly maxLength?: number;
  } = {},
): InputBlock {
  const element: PlainTextInput = {
    type: 'plain_text_input',
    action_id: FIELD_ACTION,
    multiline: o.multiline ?? false,
    max_length: Math.min(o.maxLength ?? LIMIT.plainTextInput, LIMIT.plainTextInput),
    ...(o.placeholder ? { placeholder: plain(cut(o.placeholder, LIMIT.placeholder)) } : {}),
    ...(o.initial ? { initial_value: o.initial } : {}),
  };
  return input(blockId, label, element, o);
}

/** A name field, capped where value-rules' NAME is (63 characters). */
export function nameInput(blockId: string, label: string, placeholder: string): InputBlock {
  return textInput(blockId, label, { placeholder, maxLength: 63 });
}

export function numberInput(
  blockId: string,
  label: string,
  o: InputOptions & { readonly min: number; readonly max: number; readonly initial?: number },
): InputBlock {
  const element: NumberInput = {
    type: 'number_input',
    action_id: FIELD_ACTION,
    is_decimal_allowed: false,
    min_value: String(o.min),
    max_value: String(o.max),
    ...(o.initial !== undefined ? { initial_value: String(o.initial) } : {}),
  };
  return input(blockId, label, element, o);
}

export interface Choice {
  readonly text: string;
  readonly value: string;
  readonly description?: string;
}
export interface ChoiceGroup {
  readonly label: string;
  readonly choices: readonly Choice[];
}

const option = (c: Choice): PlainTextOption => ({
  text: plain(cut(c.text, LIMIT.optionText)),
  value: c.value,
  ...(c.description ? { description: plain(cut(c.description, LIMIT.optionText)) } : {}),
});

/**
 * Keeps at most 100 choices across the groups (Slack's limit for one select, groups included),
 * dropping empty groups; says how many were left out so the form can offer a text field for them.
 */
export function fitChoices(groups: readonly ChoiceGroup[]): { groups: ChoiceGroup[]; dropped: number } {
  let room: number = LIMIT.options;
  let dropped = 0;
  const kept: ChoiceGroup[] = [];
  for (const group of groups) {
    const choices = group.choices.slice(0, Math.max(0, room));
    dropped += group.choices.length - choices.length;
    room -= choices.length;
    if (choices.length > 0) kept.push({ label: group.label, choices });
  }
  return { groups: kept, dropped };
}

/** A static select; one group shows as plain options, several as option groups. */
export function selectInput(
  blockId: string,
  label: string,
  groups: readonly ChoiceGroup[],
  o: InputOptions & { readonly placeholder?: string; readonly initial?: string } = {},
): InputBlock {
  const fitted = fitChoices(groups).groups;
  const all = fitted.flatMap((g) => g.choices);
  const initial = all.find((c) => c.value === o.initial);
  const element: StaticSelect = {
    type: 'static_select',
    action_id: FIELD_ACTION,
    ...(fitted.length === 1
      ? { options: all.map(option) }
      : {
          option_groups: fitted.map((g) => ({
            label: plain(cut(g.label, LIMIT.optionText)),
            options: g.choices.map(option),
          })),
        }),
    ...(o.placeholder ? { placeholder: plain(cut(o.placeholder, LIMIT.placeholder)) } : {}),
    ...(initial ? { initial_option: option(initial) } : {}),
  };
  return input(blockId, label, element, o);
}

export function multiSelectInput(
  blockId: string,
  label: string,
  choices: readonly Choice[],
  o: InputOptions & { readonly placeholder?: string } = {},
): InputBlock {
  const element: MultiStaticSelect = {
    type: 'multi_static_select',
    action_id: FIELD_ACTION,
    options: choices.slice(0, LIMIT.options).map(option),
    ...(o.placeholder ? { placeholder: plain(cut(o.placeholder, LIMIT.placeholder)) } : {}),
  };
  return input(blockId, label, element, o);
}

export function checkboxesInput(
  blockId: string,
  label: string,
  choices: readonly Choice[],
  o: InputOptions & { readonly initial?: readonly string[] } = {},
): InputBlock {
  const initial = choices.filter((c) => o.initial?.includes(c.value));
  const element: Checkboxes = {
    type: 'checkboxes',
    action_id: FIELD_ACTION,
    options: choices.map(option),
    ...(initial.length > 0 ? { initial_options: initial.map(option) } : {}),
  };
  return input(blockId, label, element, { ...o, optional: o.optional ?? true });
}

/** The modal around a form's blocks, with its callback id and metadata. */
export function formModal(
  spec: Pick<FormSpec, 'title'>,
  metadata: ModalMetadata,
  blocks: readonly KnownBlock[],
  submit: string | undefined,
): ModalView {
  return {
    type: 'modal',
    callback_id: callbackIdOf(metadata.form),
    title: plain(cut(spec.title, LIMIT.title)),
    close: plain('Cancel'),
    ...(submit ? { submit: plain(cut(submit, LIMIT.title)) } : {}),
    private_metadata: encodeModalMetadata(metadata),
    blocks: blocks.slice(0, 100),
  };
}

// ---------- reading a submission ----------

function stateOf(values: FormValues, blockId: string): FormStateValue | undefined {
  return values[blockId]?.[FIELD_ACTION];
}

/** A text field's value, trimmed; undefined when empty or absent. */
export function readText(values: FormValues, blockId: string): string | undefined {
  const raw = stateOf(values, blockId)?.value;
  const text = typeof raw === 'string' ? raw.trim() : '';
  return text === '' ? undefined : text;
}

/**
 * A required field checked by a value rule: the trimmed text, or undefined with the problem put in
 * `errors` on its block: `missing` when empty, else what `check` says, either with a full stop.
 */
export function readRequired(
  values: FormValues,
  blockId: string,
  errors: Record<string, string>,
  missing: string,
  check: (text: string) => string | null,
): string | undefined {
  const text = readText(values, blockId);
  const problem = text === undefined ? missing : check(text);
  if (!problem) return text;
  errors[blockId] = `${problem}.`;
  return undefined;
}

/** A multiline field as typed (only trailing blanks removed); undefined when empty or absent. */
export function readMultiline(values: FormValues, blockId: string): string | undefined {
  const raw = stateOf(values, blockId)?.value;
  if (typeof raw !== 'string' || raw.trim() === '') return undefined;
  return raw.replace(/\s+$/, '');
}

export function readSelected(values: FormValues, blockId: string): string | undefined {
  const state = stateOf(values, blockId);
  return (
    state?.selected_option?.value ??
    (typeof state?.value === 'string' ? readText(values, blockId) : undefined)
  );
}

export function readSelectedMany(values: FormValues, blockId: string): string[] {
  return (stateOf(values, blockId)?.selected_options ?? []).map((o) => o.value);
}

/**
 * `key=value` lines (blank lines skipped) into a map, or the first problem in words, naming the line.
 * `what` is "tag" or "label".
 */
export function readPairs(
  text: string | undefined,
  what: string,
  checkKey: (key: string) => string | null,
  checkValue: (value: string) => string | null,
): { pairs: Record<string, string> } | { error: string } {
  const pairs: Record<string, string> = {};
  if (text === undefined) return { pairs };
  const lines = text.split(/\r?\n/);
  for (const [i, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === '') continue;
    const eq = line.indexOf('=');
    const where = `Line ${i + 1}`;
    if (eq <= 0) return { error: `${where}: write each ${what} as key=value, one a line.` };
    const key = line.slice(0, eq).trim();
    const value = line.slice(eq + 1).trim();
    const keyProblem = checkKey(key);
    if (keyProblem) return { error: `${where}: ${keyProblem}.` };
    const valueProblem = checkValue(value);
    if (valueProblem) return { error: `${where}: ${valueProblem}.` };
    if (Object.hasOwn(pairs, key))
      return { error: `${where}: the ${what} "${cut(key, 40)}" is given twice.` };
    pairs[key] = value;
  }
  return { pairs };
}

/**
 * A form's fields as a command for the last check (the grammar's schema and the shape, in
 * read-form.ts). Problems land on the block that holds the field (`blockOf`), else on `fallback`.
 */
export function complete(
  command: FormCommand,
  secrets: FormSecrets,
  blockOf: Readonly<Record<string, string>>,
  fallback: string,
): FormDraft {
  return { ok: true, command, secrets, blockOf, fallback };
}
