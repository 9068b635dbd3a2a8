import { fileURLToPath } from 'node:url';

/** GPUOPS_POLICY for a benchmark's gpuops: the built-in policy without its rate limits. */
export const UNLIMITED_POLICY_FILE = fileURLToPath(new URL('./unlimited-policy.yaml', import.meta.url));
