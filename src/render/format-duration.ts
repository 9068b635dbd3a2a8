// Durations as people read them in messages: `1h30m`, `45s`.

/** The shortest exact spelling of a number of seconds: 3600 → 1h, 5400 → 1h30m. */
export function formatDuration(seconds: number): string {
  let rest = Math.max(0, Math.floor(seconds));
  if (rest === 0) return '0s';
  let out = '';
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) out += `${n}${unit}`;
    rest -= n * size;
  }
  return out;
}
