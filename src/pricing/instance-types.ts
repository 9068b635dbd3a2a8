// Which GPUs an instance type carries, read from its name. The infrastructure API names types
// `<model>-<details>.<N>x` (h100-hgx-80gb.8x: eight H100s) and the platform API prices a `gpu_type`
// (H100_SXM5_80GB); neither says how the two relate, so this table does. Pure: no I/O, no cloud client.

/** A model prefix of instance type names and the platform API's gpu_type for that hardware. */
export interface GpuModel {
  /** Lowercase start of the type name, up to a `-` or `.`: `h100` matches `h100-hgx-80gb.8x`. */
  readonly prefix: string;
  readonly gpuType: string;
  /**
   * The name of this model's instance types without the count (`h100-hgx-80gb`): with it, the types a
   * price list offers can be named (`h100-hgx-80gb.8x` for 8 GPUs) where the cloud lists no types.
   */
  readonly stem?: string;
}

/**
 * Known models. The longest matching prefix wins, so a more specific entry (`a100-pcie-40gb`) can be
 * added in front of a general one (`a100`) without reordering.
 */
export const GPU_MODELS: readonly GpuModel[] = [
  { prefix: 'h100', gpuType: 'H100_SXM5_80GB', stem: 'h100-hgx-80gb' },
  { prefix: 'a100', gpuType: 'A100_SXM4_80GB', stem: 'a100-sxm4-80gb' },
  { prefix: 'l40s', gpuType: 'L40S_48GB', stem: 'l40s-48gb' },
  { prefix: 'rtx-a5000', gpuType: 'RTX_A5000_24GB', stem: 'rtx-a5000-24gb' },
];

export interface InstanceTypeGpus {
  /** The platform API's gpu_type. */
  readonly gpuType: string;
  /** GPUs per machine, from the `.<N>x` suffix. */
  readonly gpuCount: number;
}

const COUNT_SUFFIX = /\.([1-9][0-9]{0,2})x$/;

/** The GPU count in a type name (`h100-hgx-80gb.8x` → 8), or undefined when it has no `.<N>x` suffix. */
export function gpuCountOf(type: string): number | undefined {
  const match = COUNT_SUFFIX.exec(type.trim().toLowerCase());
  return match ? Number(match[1]) : undefined;
}

/** The model entry whose prefix starts the type name, longest first; undefined when none does. */
export function gpuModelOf(type: string, models: readonly GpuModel[] = GPU_MODELS): GpuModel | undefined {
  const name = type.trim().toLowerCase();
  let best: GpuModel | undefined;
  for (const model of models) {
    const prefix = model.prefix.toLowerCase();
    const next = name.charAt(prefix.length);
    const matches = name.startsWith(prefix) && (next === '-' || next === '.');
    if (matches && (!best || prefix.length > best.prefix.length)) best = model;
  }
  return best;
}

/**
 * The GPUs of an instance type: `h100-hgx-80gb.8x` → { gpuType: 'H100_SXM5_80GB', gpuCount: 8 }.
 * Undefined for a model not in the table or a name without a `.<N>x` count (shown as "price unknown").
 */
export function gpusOfInstanceType(
  type: string,
  models: readonly GpuModel[] = GPU_MODELS,
): InstanceTypeGpus | undefined {
  const model = gpuModelOf(type, models);
  const gpuCount = gpuCountOf(type);
  if (!model || gpuCount === undefined) return undefined;
  return { gpuType: model.gpuType, gpuCount };
}

/**
 * The instance type names sold as `gpuType` with these GPU counts (`H100_SXM5_80GB`, [1, 8] →
 * h100-hgx-80gb.1x, h100-hgx-80gb.8x), from the first model with a stem; none when no model names it.
 */
export function typeNamesFor(
  gpuType: string,
  gpuCounts: readonly number[],
  models: readonly GpuModel[] = GPU_MODELS,
): string[] {
  const stem = models.find((m) => m.gpuType === gpuType && m.stem)?.stem;
  if (!stem) return [];
  return [...new Set(gpuCounts)]
    .filter((n) => Number.isInteger(n) && n > 0)
    .sort((a, b) => a - b)
    .map((n) => `${stem}.${n}x`);
}
