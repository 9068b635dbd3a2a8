// How far back a metrics range may reach, for `/gpu metrics` and `gpuops snapshot` alike: one pair of
// bounds, one wording. Free of imports, so `gpuops help` can name the bounds without loading more.

export const MIN_RANGE_SECONDS = 60;
export const MAX_RANGE_SECONDS = 30 * 86_400;

/** The bounds in the units people type them in. */
export const RANGE_BOUNDS = `from ${MIN_RANGE_SECONDS / 60}m to ${MAX_RANGE_SECONDS / 86_400}d`;

export const RANGE_RULE = `a range is a number with a unit m, h, d or w, such as 15m, 1h, 6h, 1d or 7d, ${RANGE_BOUNDS}`;
