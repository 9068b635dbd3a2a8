import type { GpuopsProcess } from '../../test/support/gpuops-process.js';

/** SIGTERM and a few seconds to exit (so a profiler hook can write its profile), then SIGKILL. */
export async function stopGently(child: GpuopsProcess, ms = 10_000): Promise<void> {
  if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGTERM');
  const timer = setTimeout(() => child.child.kill('SIGKILL'), ms);
  await child.exited;
  clearTimeout(timer);
}
