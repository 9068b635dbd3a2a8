// Slack's published Block Kit limits, as pure checks. The fake Slack API applies them to every message
// and view it receives; render/ tests can call them directly. Each returns the broken rules in words.

export const LIMITS = {
  messageBlocks: 50,
  viewBlocks: 100,
  messageText: 40_000,
  sectionText: 3000,
  sectionFields: 10,
  fieldText: 2000,
  headerText: 150,
  blockId: 255,
  actionsElements: 25,
  contextElements: 10,
  buttonText: 75,
  actionId: 255,
  buttonValue: 2000,
  url: 3000,
  inputLabel: 2000,
  hint: 2000,
  placeholder: 150,
  options: 100,
  optionText: 75,
  optionValue: 150,
  imageAltText: 2000,
  viewTitle: 24,
  viewButton: 24,
  privateMetadata: 3000,
  callbackId: 255,
} as const;

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const textOf = (v: unknown): string | undefined =>
  isObject(v) && typeof v.text === 'string' ? v.text : typeof v === 'string' ? v : undefined;

function maxLen(out: string[], where: string, value: unknown, max: number): void {
  const text = textOf(value);
  if (text !== undefined && text.length > max) {
    out.push(`${where} has ${text.length} characters (max ${max})`);
  }
}

function checkElement(out: string[], where: string, element: unknown): void {
  if (!isObject(element)) return;
  if (typeof element.action_id === 'string') {
    maxLen(out, `${where}.action_id`, element.action_id, LIMITS.actionId);
  }
  if (element.type === 'button') {
    maxLen(out, `${where}.text`, element.text, LIMITS.buttonText);
    maxLen(out, `${where}.value`, element.value, LIMITS.buttonValue);
    maxLen(out, `${where}.url`, element.url, LIMITS.url);
  }
  maxLen(out, `${where}.placeholder`, element.placeholder, LIMITS.placeholder);
  const groups = Array.isArray(element.option_groups) ? element.option_groups : [];
  const options = [
    ...(Array.isArray(element.options) ? element.options : []),
    ...groups.flatMap((g) => (isObject(g) && Array.isArray(g.options) ? g.options : [])),
  ];
  if (options.length > LIMITS.options) {
    out.push(`${where} has ${options.length} options (max ${LIMITS.options})`);
  }
  options.forEach((option, i) => {
    if (!isObject(option)) return;
    maxLen(out, `${where}.options[${i}].text`, option.text, LIMITS.optionText);
    maxLen(out, `${where}.options[${i}].value`, option.value, LIMITS.optionValue);
  });
  if (element.type === 'image') maxLen(out, `${where}.alt_text`, element.alt_text, LIMITS.imageAltText);
}

/** Checks a blocks array against the limits of a message (50 blocks) or a view (100 blocks). */
export function checkBlocks(blocks: unknown, surface: 'message' | 'view'): string[] {
  const out: string[] = [];
  if (!Array.isArray(blocks)) return ['blocks is not an array'];
  const max = surface === 'message' ? LIMITS.messageBlocks : LIMITS.viewBlocks;
  if (blocks.length > max) out.push(`${blocks.length} blocks (max ${max} in a ${surface})`);
  blocks.forEach((block, i) => {
    const where = `blocks[${i}]`;
    if (!isObject(block) || typeof block.type !== 'string') {
      out.push(`${where} has no type`);
      return;
    }
    maxLen(out, `${where}.block_id`, block.block_id, LIMITS.blockId);
    switch (block.type) {
      case 'section': {
        maxLen(out, `${where}.text`, block.text, LIMITS.sectionText);
        const fields = Array.isArray(block.fields) ? block.fields : [];
        if (fields.length > LIMITS.sectionFields) {
          out.push(`${where} has ${fields.length} fields (max ${LIMITS.sectionFields})`);
        }
        for (const [j, f] of fields.entries()) maxLen(out, `${where}.fields[${j}]`, f, LIMITS.fieldText);
        if (block.text === undefined && fields.length === 0) {
          out.push(`${where} (section) has neither text nor fields`);
        }
        checkElement(out, `${where}.accessory`, block.accessory);
        break;
      }
      case 'header':
        maxLen(out, `${where}.text`, block.text, LIMITS.headerText);
        break;
      case 'actions': {
        const elements = Array.isArray(block.elements) ? block.elements : [];
        if (elements.length > LIMITS.actionsElements) {
          out.push(`${where} has ${elements.length} elements (max ${LIMITS.actionsElements})`);
        }
        for (const [j, e] of elements.entries()) checkElement(out, `${where}.elements[${j}]`, e);
        // Slack refuses two elements of one block with the same action_id.
        const ids = elements.flatMap((e) =>
          isObject(e) && typeof e.action_id === 'string' ? [e.action_id] : [],
        );
        const twice = ids.filter((id, k) => ids.indexOf(id) !== k);
        if (twice.length > 0) out.push(`${where} repeats action_id ${[...new Set(twice)].join(', ')}`);
        break;
      }
      case 'context': {
        const elements = Array.isArray(block.elements) ? block.elements : [];
        if (elements.length > LIMITS.contextElements) {
          out.push(`${where} has ${elements.length} elements (max ${LIMITS.contextElements})`);
        }
        break;
      }
      case 'input':
        maxLen(out, `${where}.label`, block.label, LIMITS.inputLabel);
        maxLen(out, `${where}.hint`, block.hint, LIMITS.hint);
        checkElement(out, `${where}.element`, block.element);
        break;
      case 'image':
        // One source: a public image_url or a slack_file ({ id } or { url }, not both).
        if ((block.image_url === undefined) === (block.slack_file === undefined)) {
          out.push(`${where} (image) needs either image_url or slack_file`);
        } else if (
          isObject(block.slack_file) &&
          (block.slack_file.id === undefined) === (block.slack_file.url === undefined)
        ) {
          out.push(`${where}.slack_file needs either id or url`);
        }
        maxLen(out, `${where}.alt_text`, block.alt_text, LIMITS.imageAltText);
        maxLen(out, `${where}.image_url`, block.image_url, LIMITS.url);
        break;
      default:
        break;
    }
  });
  return out;
}

/** Checks a modal or Home view: its blocks, title, buttons, private_metadata and callback_id. */
export function checkView(view: unknown): string[] {
  if (!isObject(view)) return ['view is not an object'];
  const out = checkBlocks(view.blocks ?? [], 'view').map((v) => `view.${v}`);
  if (view.type === 'modal') {
    if (textOf(view.title) === undefined) out.push('view.title is missing (a modal needs one)');
    maxLen(out, 'view.title', view.title, LIMITS.viewTitle);
    maxLen(out, 'view.submit', view.submit, LIMITS.viewButton);
    maxLen(out, 'view.close', view.close, LIMITS.viewButton);
  }
  maxLen(out, 'view.private_metadata', view.private_metadata, LIMITS.privateMetadata);
  maxLen(out, 'view.callback_id', view.callback_id, LIMITS.callbackId);
  return out;
}
