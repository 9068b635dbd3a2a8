import type { ActionsBlock, KnownBlock, ModalView } from '@slack/types';
import { priceForType } from '../../pricing/price-for-type.js';
import { formatCounts } from '../../render/capacity.js';
import { escapeText } from '../../render/job-message.js';
import {
  type Catalog,
  type CatalogConfiguration,
  orderedTypes,
  platformConfigurations,
} from '../../store/catalog-cache.js';
import { checkName } from '../value-rules.js';
import {
  type ChoiceGroup,
  context,
  type FormContext,
  type FormSpec,
  type FormValues,
  fitChoices,
  formModal,
  plain,
  readSelected,
  readText,
  section,
  selectInput,
  textInput,
} from './form-kit.js';

// Catalogue parts shared by the forms that list it (create an instance, add a node pool): prices,
// the instance type field, how old the data is, and the loading state shown until it arrives.

/** The button that asks for fresh catalogue data; the worker updates the open form in place. */
export const REFRESH_ACTION = 'gpuops.catalog.refresh';
/** Configurations listed in a form; the rest are counted and left to `/gpu configs`. */
export const MAX_CONFIGURATIONS = 25;

export function formatAge(ms: number): string {
  const minutes = Math.floor(Math.max(0, ms) / 60_000);
  if (minutes < 1) return 'just now';
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.floor(minutes / 60);
  return `${hours} h ago`;
}

export function configurationLine(c: CatalogConfiguration): string {
  const counts = c.gpuCounts.length > 0 ? formatCounts(c.gpuCounts) : 'GPU counts not given';
  const regions = c.regions.length > 0 ? c.regions.join(', ') : 'no region given';
  return `• *${escapeText(c.gpuType)}* — $${escapeText(c.pricePerGpuHour)} per GPU-hour ($${escapeText(c.stoppedPricePerHour)}/h stopped) · ${escapeText(counts)} · ${escapeText(regions)} · ready in ~${c.provisioningMinutes} min`;
}

/** Prices, regions and provisioning estimates, packed into sections within Slack's limits. */
export function configurationBlocks(catalog: Catalog): KnownBlock[] {
  const configs = catalog.configurations;
  if (configs === undefined) return [];
  if (configs.length === 0) return [section('*GPU configurations and prices*\n_None offered right now._')];
  const shown = configs.slice(0, MAX_CONFIGURATIONS).map(configurationLine);
  const blocks: KnownBlock[] = [];
  let chunk = '*GPU configurations and prices*';
  for (const line of shown) {
    if (chunk.length + line.length + 1 > 2900) {
      blocks.push(section(chunk));
      chunk = '';
    }
    chunk += `${chunk ? '\n' : ''}${line}`;
  }
  if (chunk) blocks.push(section(chunk));
  if (configs.length > MAX_CONFIGURATIONS) {
    blocks.push(context(`…and ${configs.length - MAX_CONFIGURATIONS} more: see \`/gpu configs\`.`));
  }
  return blocks;
}

/** How fresh the data is, what could not be loaded, and the refresh button. */
export function catalogStatusBlocks(ctx: FormContext): KnownBlock[] {
  const entry = ctx.catalog;
  if (!entry) return [];
  const problems = entry.catalog.problems.map((p) => `:warning: ${escapeText(p)}`);
  const refresh: ActionsBlock = {
    type: 'actions',
    block_id: 'catalog_actions',
    elements: [
      {
        type: 'button',
        action_id: REFRESH_ACTION,
        text: plain('Refresh prices and types'),
        value: 'refresh',
      },
    ],
  };
  return [
    context([`Catalogue as of ${formatAge(ctx.now - entry.catalog.refreshedAt)}.`, ...problems].join('\n')),
    refresh,
  ];
}

export const TYPE_BLOCK = 'type';
export const TYPE_OTHER_BLOCK = 'type_other';

/** The instance type choices: available now, in use in the project, seen before. */
export function typeChoices(catalog: Catalog, now: number): ChoiceGroup[] {
  const types = orderedTypes(catalog.instanceTypes, now);
  // The platform prices gpu_types; src/pricing maps a type's name to its GPUs (docs/bot.md).
  const configurations = platformConfigurations(catalog);
  // Free machines where the cloud lists capacity (C), else offered by the price list (A, B).
  const canHave = (t: (typeof types)[number]) => (t.capacity ?? 0) > 0 || t.offered === true;
  const available = types.filter(canHave);
  const inUse = types.filter((t) => !canHave(t) && t.inUse > 0);
  const seen = types.filter((t) => !canHave(t) && t.inUse === 0);
  const text = (t: (typeof types)[number]) => {
    const parts = [t.name];
    if (t.capacity !== undefined) parts.push(`${t.capacity} free`);
    else if (t.offered === true) parts.push('offered');
    if (t.inUse > 0) parts.push(`${t.inUse} in this project`);
    const price = priceForType(t.name, configurations);
    if (price) parts.push(`$${price.pricePerHour}/h`);
    return parts.join(' · ');
  };
  return [
    { label: 'Available now', choices: available.map((t) => ({ text: text(t), value: t.name })) },
    { label: 'In use in this project', choices: inUse.map((t) => ({ text: text(t), value: t.name })) },
    { label: 'Seen before', choices: seen.map((t) => ({ text: text(t), value: t.name })) },
  ];
}

/**
 * The instance type: a list of the types the catalogue knows plus a field to type any other (the API
 * has no listing of types: see docs/bot.md), or only that field when none is known yet.
 */
export function typeBlocks(ctx: FormContext, label: string): KnownBlock[] {
  const groups = ctx.catalog ? typeChoices(ctx.catalog.catalog, ctx.now) : [];
  const { dropped } = fitChoices(groups);
  const known = groups.reduce((n, g) => n + g.choices.length, 0);
  // A type to open with (the waitlist's Create button): picked in the list, or typed when not in it.
  const wanted = ctx.metadata.type;
  const listed = wanted !== undefined && groups.some((g) => g.choices.some((c) => c.value === wanted));
  if (known === 0) {
    return [
      textInput(TYPE_BLOCK, label, {
        placeholder: 'e.g. h100-hgx-80gb.8x',
        hint: 'No instance types are known yet for this project; type the one you want.',
        maxLength: 63,
        initial: wanted,
      }),
    ];
  }
  return [
    selectInput(TYPE_BLOCK, label, groups, {
      optional: true,
      placeholder: 'Pick an instance type',
      ...(listed ? { initial: wanted } : {}),
    }),
    textInput(TYPE_OTHER_BLOCK, 'Or another instance type', {
      optional: true,
      initial: listed ? undefined : wanted,
      placeholder: 'e.g. h100-hgx-80gb.8x',
      hint:
        dropped > 0
          ? `${dropped} more types are known than the list can show; type any of them here.`
          : 'Used instead of the list when filled in.',
      maxLength: 63,
    }),
  ];
}

/** The chosen type, or the problem on the block it belongs to. */
export function readType(values: FormValues): { type: string } | { errors: Record<string, string> } {
  const other = readText(values, TYPE_OTHER_BLOCK);
  const picked = readSelected(values, TYPE_BLOCK);
  const type = other ?? picked;
  const block = other !== undefined ? TYPE_OTHER_BLOCK : TYPE_BLOCK;
  if (type === undefined) {
    return { errors: { [TYPE_BLOCK]: 'Pick an instance type, or type one in the field below.' } };
  }
  const problem = checkName(type);
  return problem ? { errors: { [block]: `An instance type: ${problem}.` } } : { type };
}

/** The form while the catalogue loads: no inputs yet, filled in place by the refresh job. */
export function loadingView(spec: Pick<FormSpec, 'title'>, ctx: FormContext): ModalView {
  return formModal(
    spec,
    ctx.metadata,
    [
      section(
        ':hourglass_flowing_sand: *Loading configurations, prices and instance types…*\nThis form fills itself in within a few seconds.',
      ),
      context('The catalogue is cached for every form; this is the first time it is needed here.'),
    ],
    undefined,
  );
}

/** Shown in place of a loading form when the catalogue could not be loaded at all. */
export function catalogFailedView(spec: Pick<FormSpec, 'title'>, ctx: FormContext, why: string): ModalView {
  return formModal(
    spec,
    ctx.metadata,
    [
      section(
        `:x: *The catalogue could not be loaded.* ${escapeText(why)}\nClose this form and try again in a minute, or give the arguments instead (see \`/gpu help\`).`,
      ),
    ],
    undefined,
  );
}
