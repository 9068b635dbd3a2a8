import {
  isObject,
  type Json,
  oneLine,
  type RenderContext,
  type Rendered,
  renderBlocks,
  str,
} from './render-terminal.js';

// Modals as terminal forms: their fields, the prompt for each, and turning a typed answer into the
// view state Slack would send with the submission.

export interface FieldOption {
  readonly text: string;
  readonly value: string;
  /** The option group it is listed under, if any. */
  readonly group?: string | undefined;
}

export type FieldKind = 'text' | 'number' | 'select' | 'multi_select' | 'checkboxes' | 'radio' | 'other';

/** One input block of a modal, as the terminal form asks for it. */
export interface FormField {
  readonly blockId: string;
  readonly actionId: string;
  readonly elementType: string;
  readonly kind: FieldKind;
  readonly label: string;
  readonly optional: boolean;
  readonly multiline: boolean;
  readonly hint?: string | undefined;
  readonly placeholder?: string | undefined;
  readonly options: readonly FieldOption[];
  /** The initial value: text for text and number fields, option values for the choices. */
  readonly initial?: string | undefined;
  readonly initialOptions: readonly string[];
}

const KINDS: Readonly<Record<string, FieldKind>> = {
  plain_text_input: 'text',
  email_text_input: 'text',
  url_text_input: 'text',
  number_input: 'number',
  static_select: 'select',
  radio_buttons: 'radio',
  multi_static_select: 'multi_select',
  checkboxes: 'checkboxes',
};

function optionsOf(element: Json, ctx: RenderContext): FieldOption[] {
  const plainOf = (o: unknown, group?: string): FieldOption[] =>
    isObject(o) && typeof o.value === 'string'
      ? [{ text: oneLine(o.text, ctx), value: o.value, ...(group ? { group } : {}) }]
      : [];
  if (Array.isArray(element.option_groups)) {
    return element.option_groups.flatMap((g) =>
      isObject(g) && Array.isArray(g.options)
        ? g.options.flatMap((o) => plainOf(o, oneLine(g.label, ctx)))
        : [],
    );
  }
  return Array.isArray(element.options) ? element.options.flatMap((o) => plainOf(o)) : [];
}

/** The input blocks of a view, in order, with what the terminal needs to ask for each. */
export function formFields(view: Json, ctx: RenderContext): FormField[] {
  const blocks = Array.isArray(view.blocks) ? view.blocks : [];
  return blocks.flatMap((block): FormField[] => {
    if (!isObject(block) || block.type !== 'input' || !isObject(block.element)) return [];
    const element = block.element;
    const elementType = str(element.type) ?? 'unknown';
    const initialOption = isObject(element.initial_option) ? str(element.initial_option.value) : undefined;
    const initialOptions = [
      ...(initialOption ? [initialOption] : []),
      ...(Array.isArray(element.initial_options)
        ? element.initial_options.flatMap((o) =>
            isObject(o) && typeof o.value === 'string' ? [o.value] : [],
          )
        : []),
    ];
    return [
      {
        blockId: str(block.block_id) ?? '',
        actionId: str(element.action_id) ?? '',
        elementType,
        kind: KINDS[elementType] ?? 'other',
        label: oneLine(block.label, ctx),
        optional: block.optional === true,
        multiline: element.multiline === true,
        hint: isObject(block.hint) ? oneLine(block.hint, ctx) : undefined,
        placeholder: isObject(element.placeholder) ? oneLine(element.placeholder, ctx) : undefined,
        options: optionsOf(element, ctx),
        initial: str(element.initial_value),
        initialOptions,
      },
    ];
  });
}

/** The modal's title and buttons, and its blocks other than inputs (those become prompts). */
export function renderView(view: Json, ctx: RenderContext, firstButton = 1): Rendered {
  const title = oneLine(view.title, ctx);
  const submit = isObject(view.submit) ? oneLine(view.submit, ctx) : undefined;
  const close = isObject(view.close) ? oneLine(view.close, ctx) : 'Cancel';
  const blocks = (Array.isArray(view.blocks) ? view.blocks : []).filter(
    (b) => !(isObject(b) && b.type === 'input'),
  );
  const body = renderBlocks(blocks, ctx, firstButton);
  const head = `${ctx.style.bold(`▣ ${title}`)}  ${ctx.style.dim(submit ? `(${submit} · ${close})` : `(${close})`)}`;
  // A Home tab has no title bar and nothing to close: only its blocks.
  const lines = view.type === 'home' ? body.lines : [head, ...body.lines];
  return {
    lines: lines.map((line, i) => (i === 0 && view.type !== 'home' ? line : `│ ${line}`)),
    buttons: body.buttons,
  };
}

/** The question for one field, with its options numbered and what Enter keeps. */
export function fieldPrompt(field: FormField): { lines: string[]; prompt: string } {
  const lines: string[] = [];
  const required = field.optional ? 'optional' : 'required';
  lines.push(`${field.label} (${required})${field.hint ? ` — ${field.hint}` : ''}`);
  let group: string | undefined;
  field.options.forEach((option, i) => {
    if (option.group !== undefined && option.group !== group) {
      group = option.group;
      lines.push(`   ${group}:`);
    }
    const picked = field.initialOptions.includes(option.value) ? ' (chosen)' : '';
    lines.push(`   ${String(i + 1).padStart(2)}) ${option.text}${picked}`);
  });
  const how: Record<FieldKind, string> = {
    text: field.multiline ? 'text, \\n for a new line' : 'text',
    number: 'a number',
    select: 'a number from the list',
    radio: 'a number from the list',
    multi_select: 'numbers from the list, comma-separated; - for none',
    checkboxes: 'numbers from the list, comma-separated; - for none',
    other: 'text',
  };
  const keeps = keptValue(field);
  const enter =
    keeps !== undefined ? `, Enter keeps ${keeps}` : field.optional ? ', Enter leaves it empty' : '';
  return {
    lines,
    prompt: `  ${field.placeholder ? `${field.placeholder} — ` : ''}${how[field.kind]}${enter}> `,
  };
}

function keptValue(field: FormField): string | undefined {
  if (field.kind === 'text' || field.kind === 'number' || field.kind === 'other') {
    return field.initial !== undefined && field.initial !== '' ? `"${field.initial}"` : undefined;
  }
  if (field.initialOptions.length === 0) return undefined;
  return field.initialOptions
    .map((value) => field.options.find((o) => o.value === value)?.text ?? value)
    .join(', ');
}

/** One element's entry in `view.state.values`, as Slack sends it with a view_submission. */
export type StateValue = Readonly<Record<string, unknown>>;

export type FieldAnswer =
  | { readonly ok: true; readonly state: StateValue }
  | { readonly ok: false; readonly error: string };

function optionState(option: FieldOption): Json {
  return { text: { type: 'plain_text', text: option.text, emoji: true }, value: option.value };
}

function pickOption(field: FormField, token: string): FieldOption | undefined {
  const t = token.trim();
  if (/^\d+$/.test(t)) return field.options[Number(t) - 1];
  return field.options.find((o) => o.value === t || o.text === t);
}

/**
 * What a typed answer means for a field, as the element's state Slack would send. An empty answer
 * keeps the initial value. Checks only what Slack's own client checks (a choice must exist, a number
 * must be a number, a required field must be filled); the bot checks the rest on submit.
 */
export function answerField(field: FormField, typed: string): FieldAnswer {
  const input = typed.trim();
  const type = field.elementType;
  switch (field.kind) {
    case 'select':
    case 'radio': {
      if (input === '') {
        const initial = field.options.find((o) => o.value === field.initialOptions[0]);
        if (initial) return { ok: true, state: { type, selected_option: optionState(initial) } };
        if (field.optional) return { ok: true, state: { type, selected_option: null } };
        return { ok: false, error: 'Please choose one of the options.' };
      }
      const option = pickOption(field, input);
      if (!option) return { ok: false, error: `"${input}" is not one of the options; type its number.` };
      return { ok: true, state: { type, selected_option: optionState(option) } };
    }
    case 'multi_select':
    case 'checkboxes': {
      let chosen: FieldOption[];
      if (input === '') chosen = field.options.filter((o) => field.initialOptions.includes(o.value));
      else if (input === '-') chosen = [];
      else {
        chosen = [];
        for (const token of input.split(',').filter((t) => t.trim() !== '')) {
          const option = pickOption(field, token);
          if (!option) return { ok: false, error: `"${token.trim()}" is not one of the options.` };
          if (!chosen.includes(option)) chosen.push(option);
        }
      }
      if (chosen.length === 0 && !field.optional) return { ok: false, error: 'Please choose at least one.' };
      return { ok: true, state: { type, selected_options: chosen.map(optionState) } };
    }
    case 'number': {
      const value = input === '' ? (field.initial ?? '') : input;
      if (value === '') {
        if (field.optional) return { ok: true, state: { type, value: null } };
        return { ok: false, error: 'Please enter a number.' };
      }
      if (!/^-?\d+(\.\d+)?$/.test(value)) return { ok: false, error: `"${value}" is not a number.` };
      return { ok: true, state: { type, value } };
    }
    default: {
      const raw =
        typed === '' ? (field.initial ?? '') : field.multiline ? typed.replaceAll('\\n', '\n') : typed;
      if (raw.trim() === '') {
        if (field.optional) return { ok: true, state: { type, value: null } };
        return { ok: false, error: 'Please fill this in.' };
      }
      return { ok: true, state: { type, value: raw } };
    }
  }
}
