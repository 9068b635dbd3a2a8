import type { Logger } from '../log/logger.js';
import { redactText } from '../log/logger.js';

// The APIs gpuops calls but can live without for a while (the cloud, its platform API, its metrics
// API): checked at start-up, periodically, and at once when a real call gets no answer; a real call
// that succeeds says the API is back. Their
// state shows at /readyz as "degraded", never "unavailable": the listener still answers people, and
// the jobs wait and retry. Transitions are logged once each, with the setting to check.

/** ok: answered. unreachable: no answer (refused, reset, timed out). refused: answered 401/403 (the
 * credentials). failing: answered 5xx. checking: no check finished yet. */
export type DependencyState = 'checking' | 'ok' | 'unreachable' | 'refused' | 'failing';

export type DependencyName = 'cloud' | 'platform' | 'metrics';

export interface DependencyProbe {
  readonly name: DependencyName;
  /** How people name it: "the cloud API". */
  readonly label: string;
  /** The setting that holds the address, and where it points (never with credentials in it). */
  readonly urlSetting: string;
  readonly url: string;
  /** The settings that hold the credentials (their names only). */
  readonly credentialSettings: string;
  /** One cheap call, never retried at length; resolves when the API answered 2xx. */
  readonly run: () => Promise<unknown>;
  /** What a failure of `run` says about the API. */
  readonly classify: (err: unknown) => { state: DependencyState; detail: string };
}

export interface DependencyStatus {
  readonly name: DependencyName;
  readonly state: DependencyState;
  /** One sentence: what was seen and what to check; absent while ok. */
  readonly reason?: string;
}

export interface DependencyHealth {
  /** Runs every probe once, within the probes' own time limits. */
  checkAll(): Promise<void>;
  /** A real call's outcome: any 2xx means ok; no answer at all has the API checked again at once. */
  record(name: DependencyName, outcome: number | 'network' | 'timeout' | 'cancelled'): void;
  report(): readonly DependencyStatus[];
  /** Re-checks every `everyMs` until stop(). */
  start(everyMs: number): void;
  stop(): void;
}

/** Least time between two checks made because real calls got no answer. */
const ON_DEMAND_GAP_MS = 5_000;

export function isDegraded(state: DependencyState): boolean {
  return state !== 'ok' && state !== 'checking';
}

/** An address fit for a log line: no user, password, query or fragment. */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return '(not a URL)';
  }
}

function reasonOf(probe: DependencyProbe, state: DependencyState, detail: string): string {
  const where = `${probe.label} at ${probe.url}`;
  const what = redactText(detail);
  switch (state) {
    case 'unreachable':
      return `${where} did not answer (${what}): check ${probe.urlSetting} and that the service is up. Requests that need it wait and retry.`;
    case 'refused':
      return `${where} answers but refused gpuops' credentials (${what}): check ${probe.credentialSettings}. Requests that need it fail until then.`;
    case 'failing':
      return `${where} answers with server errors (${what}); requests that need it retry. Check the service's status.`;
    default:
      return `${where}: ${what}`;
  }
}

export function createDependencyHealth(probes: readonly DependencyProbe[], log: Logger): DependencyHealth {
  const states = new Map<DependencyName, { state: DependencyState; reason?: string }>(
    probes.map((p) => [p.name, { state: 'checking' }]),
  );
  let timer: NodeJS.Timeout | undefined;
  let checking: Promise<void> | undefined;
  let lastOnDemand = 0;

  function set(probe: DependencyProbe, state: DependencyState, detail = ''): void {
    const before = states.get(probe.name)?.state;
    if (state === 'ok') {
      states.set(probe.name, { state });
      if (before !== undefined && isDegraded(before)) {
        log.info({ dependency: probe.name, url: probe.url }, `${probe.label} answers again`);
      }
      return;
    }
    const reason = reasonOf(probe, state, detail);
    states.set(probe.name, { state, reason });
    if (before !== state) log.warn({ dependency: probe.name, state, url: probe.url }, reason);
  }

  async function checkOne(probe: DependencyProbe): Promise<void> {
    try {
      await probe.run();
      set(probe, 'ok');
    } catch (err) {
      const { state, detail } = probe.classify(err);
      set(probe, state, detail);
    }
  }

  const health: DependencyHealth = {
    checkAll() {
      checking ??= Promise.all(probes.map(checkOne))
        .then(() => {})
        .finally(() => {
          checking = undefined;
        });
      return checking;
    },
    record(name, outcome) {
      const probe = probes.find((p) => p.name === name);
      if (!probe) return;
      if (typeof outcome === 'number' && outcome >= 200 && outcome < 300) {
        set(probe, 'ok');
        return;
      }
      // No answer to a real call: check now, on a fresh connection (a reused socket the server had
      // closed fails once and says nothing), at most once every few seconds however many calls fail.
      if ((outcome === 'network' || outcome === 'timeout') && Date.now() - lastOnDemand >= ON_DEMAND_GAP_MS) {
        lastOnDemand = Date.now();
        void health.checkAll();
      }
    },
    report() {
      return probes.map((p) => ({ name: p.name, ...states.get(p.name)! }));
    },
    start(everyMs) {
      if (timer || probes.length === 0) return;
      timer = setInterval(() => void health.checkAll(), everyMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
  return health;
}
