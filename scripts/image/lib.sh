# Shared by build.sh and smoke.sh: plain log lines, timeouts on everything that waits, and podman
# installed and configured from Debian packages when it is missing.
# shellcheck shell=bash

IMAGE_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(cd "$IMAGE_DIR/../.." && pwd)"
# shellcheck source=versions.env
source "$IMAGE_DIR/versions.env"
# Downloads, rootfs tarballs and logs: never committed (tmp/ is gitignored).
WORK_DIR="${GPUOPS_IMAGE_WORK:-$REPO_DIR/tmp/image}"
mkdir -p "$WORK_DIR"

# Podman settings for these scripts only (CONTAINERS_CONF: the machine's containers.conf is left
# alone). They suit a CI machine that is itself a container: runc with cgroupfs, events in a file (no
# journald), netavark with aardvark-dns so containers and pods on one network find each other by name,
# and open-file and process limits raised to what this machine allows (podman's own default asks
# for more than a container can grant, and runc then refuses to start anything).
limit() {
  local hard
  hard="$(ulimit -H "$1")"
  if [ "$hard" = unlimited ] || [ "$hard" -gt "$2" ]; then hard=$2; fi
  printf '%s' "$hard"
}
export CONTAINERS_CONF="$WORK_DIR/containers.conf"
cat >"$CONTAINERS_CONF" <<CONF
[containers]
default_ulimits = ["nofile=$(limit -n 65536):$(limit -n 65536)", "nproc=$(limit -u 32768):$(limit -u 32768)"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"

[network]
network_backend = "netavark"
CONF

log() { printf '%s %s\n' "${LOG_PREFIX:-image:}" "$*"; }
die() {
  log "FAIL: $*" >&2
  exit 1
}

# t SECONDS command...: runs the command, killing it (and failing) when it outlasts SECONDS.
t() {
  local secs=$1
  shift
  timeout --kill-after=10 "$secs" "$@"
  local rc=$?
  [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || log "timed out after ${secs}s: $*" >&2
  return "$rc"
}

image_exists() { t 60 podman image exists "$1"; }

# The Debian packages podman needs here; installs what is missing (root and apt-get only).
# iptables: netavark sets up the bridge network of `podman kube play` with it (a Recommends, so not
# brought in by --no-install-recommends).
PODMAN_PACKAGES=(podman runc catatonit netavark aardvark-dns iptables fuse-overlayfs slirp4netns uidmap mmdebstrap)
ensure_podman() {
  local missing=() p
  for p in "${PODMAN_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
      log "cannot install ${missing[*]}: needs root and apt-get" >&2
      return 1
    fi
    log "installing ${missing[*]} from Debian packages"
    export DEBIAN_FRONTEND=noninteractive
    t 300 apt-get update -qq >/dev/null || return 1
    t 600 apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || return 1
  fi
  command -v podman >/dev/null 2>&1
}

# The npm registry npm itself is configured with (never a host name written here).
npm_registry() {
  local r
  r="$(npm config get registry 2>/dev/null | tail -1)"
  printf '%s' "${r%/}/"
}

# npm pack NAME@VERSION into DIR, checked against INTEGRITY when given; prints the tarball path.
npm_fetch() {
  local spec=$1 dir=$2 integrity=${3:-} out json got
  mkdir -p "$dir"
  json="$(cd "$dir" && t 300 npm pack "$spec" --json --registry "$(npm_registry)" 2>/dev/null)" \
    || die "npm pack $spec failed"
  out="$dir/$(printf '%s' "$json" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s)[0].filename))')"
  got="$(printf '%s' "$json" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s)[0].integrity))')"
  if [ -n "$integrity" ] && [ "$got" != "$integrity" ]; then
    die "$spec: integrity $got, expected $integrity (versions.env)"
  fi
  printf '%s' "$out"
}
