// The npm registry this project is built from serves only the Linux builds of packages that ship one
// binary package per platform, so `npm install` leaves the other platforms out of package-lock.json
// and `npm ci` then refuses the lock as out of sync. This adds lock entries for those optional
// platform packages (version, os, cpu, libc; nothing to download), which npm ci skips on Linux.
// Run after changing dependencies: node scripts/lock-foreign-platforms.mjs
import { readFileSync, writeFileSync } from 'node:fs';

const lockPath = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(lockPath, 'utf8'));
const packages = lock.packages;

function platformOf(name) {
  const os = ['android', 'darwin', 'freebsd', 'linux', 'win32', 'openbsd', 'sunos', 'aix', 'netbsd'].find(
    (o) => new RegExp(`[-/]${o}[-]`).test(`${name}-`),
  );
  const cpu = ['arm64', 'x64', 'arm', 'ia32', 'riscv64', 's390x', 'ppc64', 'loong64'].find((c) =>
    new RegExp(`-${c}(-|$)`).test(name),
  );
  const libc = /-musl(\b|$)/.test(name) ? 'musl' : /-gnu(\b|$)/.test(name) ? 'glibc' : undefined;
  return { os, cpu, libc };
}

let added = 0;
for (const [path, meta] of Object.entries(packages)) {
  const optional = meta.optionalDependencies ?? {};
  for (const [dep, range] of Object.entries(optional)) {
    const base = path === '' ? 'node_modules' : `${path}/node_modules`;
    const hoisted = `node_modules/${dep}`;
    if (packages[hoisted] || packages[`${base}/${dep}`]) continue;
    const { os, cpu, libc } = platformOf(dep);
    if (!os || (os === 'linux' && !libc && !cpu)) continue;
    const version = String(range).replace(/^[\^~=]/, '');
    packages[hoisted] = {
      version,
      ...(cpu ? { cpu: [cpu] } : {}),
      ...(meta.dev ? { dev: true } : {}),
      ...(libc ? { libc: [libc] } : {}),
      optional: true,
      os: [os],
    };
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1)),
);
writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`added ${added} lock entries for other platforms`);
