// Splits command text into words one at a time, so a subcommand that takes "the rest of the line"
// (an SSH key, a PromQL expression) gets it raw, quotes and all.

export interface Word {
  /** The word with its quotes removed. */
  readonly value: string;
  /** Offsets in the text, quotes included. */
  readonly start: number;
  readonly end: number;
  /** True when the word starts with a quote: a quoted "--x" is a value, not a flag. */
  readonly quoted: boolean;
}

const DOUBLE = new Set(['"', '“', '”', '„']);
const SINGLE = new Set(["'", '‘', '’', '‚']);
// Clients may turn a typed -- into an em or en dash.
const DASHES = /^(?:—|–)(?=\S)/;

export class UnclosedQuoteError extends Error {
  readonly position: number;
  constructor(position: number) {
    super('a quote was opened and never closed');
    this.position = position;
  }
}

const isSpace = (c: string): boolean => /\s/.test(c);

export class WordCursor {
  readonly text: string;
  private pos = 0;

  constructor(text: string) {
    this.text = text;
  }

  private skipSpace(): void {
    while (this.pos < this.text.length && isSpace(this.text[this.pos]!)) this.pos++;
  }

  get done(): boolean {
    this.skipSpace();
    return this.pos >= this.text.length;
  }

  /** The next word, or null at the end. Throws UnclosedQuoteError. */
  next(): Word | null {
    this.skipSpace();
    if (this.pos >= this.text.length) return null;
    const start = this.pos;
    let value = '';
    if (DASHES.test(this.text.slice(start, start + 2))) {
      value = '--';
      this.pos++;
    }
    while (this.pos < this.text.length) {
      const c = this.text[this.pos]!;
      if (isSpace(c)) break;
      const family = DOUBLE.has(c) ? DOUBLE : SINGLE.has(c) ? SINGLE : null;
      if (family) {
        const close = this.findClose(family, this.pos + 1);
        if (close === -1) throw new UnclosedQuoteError(this.pos);
        value += this.text.slice(this.pos + 1, close);
        this.pos = close + 1;
        continue;
      }
      value += c;
      this.pos++;
    }
    const first = this.text[start]!;
    return { value, start, end: this.pos, quoted: DOUBLE.has(first) || SINGLE.has(first) };
  }

  /** The next word without reading it. */
  peek(): Word | null {
    const at = this.pos;
    try {
      return this.next();
    } finally {
      this.pos = at;
    }
  }

  private findClose(family: ReadonlySet<string>, from: number): number {
    for (let i = from; i < this.text.length; i++) if (family.has(this.text[i]!)) return i;
    return -1;
  }

  /** Everything not yet read, raw and trimmed; the cursor moves to the end. */
  rest(): string {
    const out = this.text.slice(this.pos).trim();
    this.pos = this.text.length;
    return out;
  }

  /** Reads every remaining word. */
  all(): Word[] {
    const out: Word[] = [];
    for (let w = this.next(); w !== null; w = this.next()) out.push(w);
    return out;
  }
}

/** All words of a text (throws UnclosedQuoteError). */
export function tokenize(text: string): Word[] {
  return new WordCursor(text).all();
}
