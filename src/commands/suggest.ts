// "Did you mean …?" for mistyped words: the nearest known word by Damerau–Levenshtein distance
// (insertions, deletions, substitutions and transpositions of adjacent letters, each costing one).

/** Unrestricted Damerau–Levenshtein distance (Lowrance–Wagner), so "strat" is one step from "start". */
export function damerauLevenshtein(a: string, b: string): number {
  const INF = a.length + b.length;
  const lastRow = new Map<string, number>();
  const rows = a.length + 2;
  const cols = b.length + 2;
  const h = new Array<number>(rows * cols).fill(0);
  const at = (i: number, j: number) => i * cols + j;
  h[at(0, 0)] = INF;
  for (let i = 0; i <= a.length; i++) {
    h[at(i + 1, 0)] = INF;
    h[at(i + 1, 1)] = i;
  }
  for (let j = 0; j <= b.length; j++) {
    h[at(0, j + 1)] = INF;
    h[at(1, j + 1)] = j;
  }
  for (let i = 1; i <= a.length; i++) {
    let lastMatchCol = 0;
    for (let j = 1; j <= b.length; j++) {
      const i1 = lastRow.get(b[j - 1]!) ?? 0;
      const j1 = lastMatchCol;
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      if (cost === 0) lastMatchCol = j;
      h[at(i + 1, j + 1)] = Math.min(
        h[at(i, j)]! + cost,
        h[at(i + 1, j)]! + 1,
        h[at(i, j + 1)]! + 1,
        h[at(i1, j1)]! + (i - i1 - 1) + 1 + (j - j1 - 1),
      );
    }
    lastRow.set(a[i - 1]!, i);
  }
  return h[at(a.length + 1, b.length + 1)]!;
}

/** Largest distance still worth suggesting: one edit for short words, two for longer ones. */
function tolerance(word: string): number {
  return word.length <= 3 ? 1 : 2;
}

/**
 * The known word nearest to `word`, or null when none is close. A synonym (words people reach for that
 * the grammar spells differently, offered and never silently accepted) counts only when its target
 * is among `known`; a unique prefix of three or more letters counts too (`cap` → `capacity`).
 */
export function nearestWord(
  word: string,
  known: readonly string[],
  synonyms: Readonly<Record<string, string>> = {},
): string | null {
  const w = word.toLowerCase();
  if (w.length === 0 || known.length === 0 || known.includes(w)) return null;
  const alias = Object.hasOwn(synonyms, w) ? synonyms[w] : undefined;
  if (alias !== undefined && known.includes(alias) && alias !== w) return alias;
  let best: string | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const distance = damerauLevenshtein(w, candidate);
    // On a tie, a word that starts with what was typed wins (`of` → `off`, not `on`).
    const better =
      distance < bestDistance ||
      (distance === bestDistance && candidate.startsWith(w) && !best?.startsWith(w));
    if (better) {
      best = candidate;
      bestDistance = distance;
    }
  }
  if (best !== null && bestDistance > 0 && bestDistance <= tolerance(w) && bestDistance < best.length) {
    return best;
  }
  if (w.length >= 3) {
    const prefixed = known.filter((k) => k.startsWith(w) && k !== w);
    if (prefixed.length === 1) return prefixed[0]!;
  }
  return null;
}
