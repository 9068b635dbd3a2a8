import type { ReadyInfo } from './start-sim.js';

// `gpuops sim --env`: the ready line as shell `export` lines named after gpuops' own settings
// (.env.example), so a newcomer can paste them, or eval them, without python or jq.

/** A value as one shell word: bare when it is only safe characters, else in single quotes. */
function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

/** The settings gpuops reads, with the simulator's values; metrics only when they are on. */
export function readyEnvLines(info: ReadyInfo): string[] {
  const settings: [string, string][] = [
    ['CLOUD_API_URL', info.cloudUrl],
    ['CLOUD_API_SHAPE', info.shape],
    ['CLOUD_API_TOKEN', info.cloudToken],
    ['CLOUD_PROJECT_ID', info.projectId],
    ['PLATFORM_API_URL', info.platformUrl],
    ['PLATFORM_API_KEY', info.platformApiKey],
    ...(info.metricsAvailable
      ? ([
          ['METRICS_URL', info.metricsUrl],
          ['METRICS_API_KEY', info.metricsApiKey],
        ] as [string, string][])
      : []),
  ];
  const lines = settings.map(([key, value]) => `export ${key}=${shellWord(value)}`);
  if (!info.metricsAvailable && info.metricsNote) lines.push(`# no METRICS_URL: ${info.metricsNote}`);
  // A comment, so the whole output stays valid shell: the simulator's control API is not a setting.
  lines.push(`# the simulator's control API: ${info.controlUrl}`);
  return lines;
}
