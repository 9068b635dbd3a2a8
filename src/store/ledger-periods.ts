// The periods the spend ledger is kept by (store/watch-snapshots.ts): the watchers add to them and
// the digest and the Home tab read them.

/** The calendar day (YYYY-MM-DD) and month (YYYY-MM) of `at` in a time zone. */
export function periodsOf(at: number, tz: string): { day: string; month: string } {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone: tz,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).formatToParts(new Date(at));
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '00';
  const month = `${get('year')}-${get('month')}`;
  return { day: `${month}-${get('day')}`, month };
}
