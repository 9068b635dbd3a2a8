// Slack rewrites what people type before a slash command sees it: links and mentions become
// <…> markup and the characters & < > become HTML entities. This undoes both, so the parser reads
// what the person typed.

// Only what Slack itself writes: <@U…>, <#C…>, <!here>, <scheme:…> with an optional |label. Other
// angle brackets (from a client that does not escape them) are left alone.
const MARKUP = /<((?:[@#!]|[a-z][a-z0-9+.-]*:)[^<>|\s]*(?:\|[^<>]*)?)>/gi;

function unwrapOne(inner: string): string {
  const bar = inner.indexOf('|');
  const target = bar === -1 ? inner : inner.slice(0, bar);
  const label = bar === -1 ? '' : inner.slice(bar + 1);
  // Mentions: keep the stable id (<@U123|ada> → @U123), since names change and ids do not.
  if (target.startsWith('@')) return target;
  if (target.startsWith('#')) return target;
  if (target.startsWith('!subteam^')) return label || `@${target.slice('!subteam^'.length)}`;
  if (target.startsWith('!date^')) return label;
  if (target.startsWith('!')) return `@${target.slice(1)}`;
  // Auto-linked text (train.io, me@host.com): the label is what the person typed.
  if (label) return label;
  if (target.startsWith('mailto:')) return target.slice('mailto:'.length);
  return target;
}

/** Unwraps <http://x|label>, <mailto:a@b|a@b>, <@U123> and decodes &lt; &gt; &amp;. */
export function unescapeSlackText(text: string): string {
  return text
    .replace(MARKUP, (_, inner: string) => unwrapOne(inner))
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');
}

const SMART = { '“': '"', '”': '"', '„': '"', '‘': "'", '’': "'", '‚': "'" } as const;

/** Straight quotes for text that goes on to a machine (PromQL), where “ ” mean nothing. */
export function straightenQuotes(text: string): string {
  return text.replace(/[“”„‘’‚]/g, (c) => SMART[c as keyof typeof SMART]);
}
