// "1 request", "2 requests": a count with its noun in the right number, for everything people read.

/** `n` and the noun, singular for exactly one: countNoun(1, 'GPU') → "1 GPU". */
export function countNoun(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}
