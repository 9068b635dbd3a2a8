// Times in Slack: `<!date^…>` makes Slack show each reader the time in their own zone; the fallback,
// for clients that cannot, is plain UTC. The demo's terminal chat draws them in its people's zones.

/** `2026-11-23 03:41 UTC`: for plain text, where Slack does not format dates, and the fallback. */
export function plainDate(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** A moment as Slack shows it to each reader: `Today 19:30` in their zone. */
export function slackDate(ms: number): string {
  return `<!date^${Math.floor(ms / 1000)}^{date_short_pretty} {time}|${plainDate(ms)}>`;
}
