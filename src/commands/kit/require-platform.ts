import type { PlatformClient } from '../../cloud/index.js';
import { PermanentJobError } from './job-errors.js';
import type { JobRun } from './job-run.js';

export const PLATFORM_NOT_CONFIGURED =
  'SSH keys and GPU configurations come from the platform API, which is not configured: set PLATFORM_API_URL and PLATFORM_API_KEY.';

/** The platform API client, or a permanent failure saying which settings turn it on. */
export function requirePlatform(run: JobRun): PlatformClient {
  if (!run.deps.platform) throw new PermanentJobError(PLATFORM_NOT_CONFIGURED);
  return run.deps.platform;
}
