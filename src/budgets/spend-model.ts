// The shapes budgets are built from, shared by the spend ledger (which writes and reads them), the
// forecast and admission (which compute with them) and the Slack views, the digest and the CSV export
// (which show them). Types only: the ledger lives in store/, the arithmetic in budgets/.

/** One machine's spend on one day (the ledger's unit; one CSV row of `gpuops spend export`). */
export interface SpendRow {
  /** The day, `YYYY-MM-DD` in the bot's time zone (TZ). */
  readonly day: string;
  readonly project: string;
  /** The instance's id in the cloud. */
  readonly instance: string;
  /** The instance's name, when gpuops knows it. */
  readonly name?: string;
  /** The Slack user who had it made through gpuops; absent for machines made elsewhere. */
  readonly owner?: string;
  /** The instance type (empty when unknown). */
  readonly type: string;
  /** Running hours counted on that day. */
  readonly hours: number;
  /** Dollars: hours × the type's hourly price (0 when the price is unknown). */
  readonly usd: number;
}

/** Which rows to read: days from `from` to `to` inclusive (`YYYY-MM-DD`), optionally some projects. */
export interface SpendQuery {
  readonly from: string;
  readonly to: string;
  readonly projects?: readonly string[];
}

/** A machine running now and what it costs an hour (the run rate the forecast extends). */
export interface RunningMachine {
  readonly project: string;
  readonly instance: string;
  readonly name?: string;
  readonly owner?: string;
  readonly type: string;
  readonly usdPerHour: number;
}

/** Where spend is read from (the Redis ledger in production). */
export interface SpendSource {
  rows(query: SpendQuery): Promise<readonly SpendRow[]>;
  running(projects?: readonly string[]): Promise<readonly RunningMachine[]>;
}

/** A budget's month as `/gpu budget`, the Home tab, the digest and the alerts show it. */
export interface BudgetStatus {
  readonly name: string;
  readonly monthlyUsd: number;
  /** Month to date. */
  readonly actualUsd: number;
  /** Month to date + run rate to the month's end, less the stops schedules and leases will make. */
  readonly forecastUsd: number;
  /** `ok`, `forecast_over` (forecast above the budget), `over` (actual above it). */
  readonly state: 'ok' | 'forecast_over' | 'over';
  /** The month, `YYYY-MM`. */
  readonly month: string;
}
