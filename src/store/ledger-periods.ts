// The periods the spend ledger is kept by (store/watch-snapshots.ts): the watchers add to them and
// the digest and the Home tab read them.

// Making a formatter costs more than using it many times (a watcher look asks twice).
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' });
    formatters.set(tz, f);
  }
  return f;
}

/** The calendar day (YYYY-MM-DD) and month (YYYY-MM) of `at` in a time zone. */
export function periodsOf(at: number, tz: string): { day: string; month: string } {
  const parts = formatterFor(tz).formatToParts(new Date(at));
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '00';
  const month = `${get('year')}-${get('month')}`;
  return { day: `${month}-${get('day')}`, month };
}
