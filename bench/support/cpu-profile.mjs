// A CPU profile of a benchmarked app, for BENCH_NODE_OPTIONS='--import ./bench/support/cpu-profile.mjs'
// (Node refuses --cpu-prof in NODE_OPTIONS): profiles from start-up, and on SIGTERM writes
// CPU_PROFILE_DIR/<pid>.cpuprofile (default tmp/profiles), which Chrome DevTools opens, then exits.
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const dir = process.env.CPU_PROFILE_DIR ?? 'tmp/profiles';
const session = new Session();
session.connect();
session.post('Profiler.enable', () =>
  session.post('Profiler.setSamplingInterval', { interval: 500 }, () => session.post('Profiler.start')),
);
process.prependOnceListener('SIGTERM', () => {
  session.post('Profiler.stop', (err, result) => {
    if (!err) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    }
  });
});
