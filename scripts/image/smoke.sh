#!/usr/bin/env bash
# Smoke test of the gpuops image (npm run image:smoke), in containers of one podman pod (their own
# loopback, no network beyond it: nothing depends on DNS or a bridge):
#   every role starts (start, web, worker, sim, demo) read-only, without capabilities, non-root;
#   /healthz and /readyz answer on OPS_PORT and the image's HEALTHCHECK passes;
#   a signed /gpu command is acknowledged by the web container and answered through Redis by a
#   separate worker container (Slack's side: the project's fake Web API, scripts/image/smoke/drive.mjs);
#   SIGTERM drains and exits 0 within the grace period;
#   the process cannot write its own code, and no secret is in the image's layers or history;
#   then the Kubernetes kit under `podman kube play` (kube-play.sh) answers a signed request too.
# Builds first (bases cached; --no-build uses the images as they are, --no-kube skips kube play).
# Prints one plain line per check; exits non-zero on any failure; when this machine cannot run
# containers it says so in one line and exits 0. Leaves no container, pod or network behind.
set -uo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
LOG_PREFIX="image-smoke:"

build=1
kube=1
for arg in "$@"; do
  case "$arg" in
    --no-build) build=0 ;;
    --no-kube) kube=0 ;;
    *) die "unknown option $arg (--no-build, --no-kube)" ;;
  esac
done

skip() {
  log "SKIPPED: this machine cannot run containers ($*)"
  exit 0
}
started=$SECONDS
ensure_podman || skip "podman is not installed and could not be installed"
t 60 podman info >/dev/null 2>&1 || skip "podman info fails"
if [ "$build" -eq 1 ]; then
  bash "$IMAGE_DIR/build.sh" --debian-only || die "building the Debian base failed"
  t 120 podman run --rm --network none "$DEBIAN_IMAGE" true >/dev/null 2>&1 || skip "podman run fails"
  bash "$IMAGE_DIR/build.sh" || die "building the image failed"
else
  for image in "$APP_IMAGE" "$REDIS_IMAGE"; do
    image_exists "$image" || die "$image is missing: run npm run image:build"
  done
fi

# --- set-up -------------------------------------------------------------------------------------
id="gpuops-smoke-$(date +%s)-$$"
grace=30
bot_token="xoxb-smoke-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
signing_secret="smoke-signing-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
envfile="$WORK_DIR/$id.env"
save_dir="$WORK_DIR/$id.save"
failures=0

cleanup() {
  local ids
  ids="$(t 60 podman ps -aq --filter "label=gpuops-smoke=$id" 2>/dev/null)"
  [ -z "$ids" ] || t 120 podman rm -f -t 0 $ids >/dev/null 2>&1
  t 120 podman pod rm -f -t 0 "$id" >/dev/null 2>&1
  rm -f "$envfile"
  rm -rf "$save_dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ok() { log "ok   $*"; }
bad() {
  log "FAIL $*"
  failures=$((failures + 1))
}
# Podman without systemd or syslog (a CI container) complains about them on every run: not our news.
quiet() { grep -vE 'unable to get systemd connection|failed to connect to syslog' || true; }
# Runs a check; its own output lines are shown indented.
check() {
  local what=$1
  shift
  local out rc
  out="$("$@" 2>&1)"
  rc=$?
  out="$(printf '%s' "$out" | quiet)"
  if [ "$rc" -eq 0 ]; then ok "$what"; else bad "$what (exit $rc)"; fi
  [ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/       /'
  return "$rc"
}

# The hardening every gpuops container gets here, as the Kubernetes manifests ask for it.
HARDENED=(--read-only --tmpfs /tmp:rw,size=64m,mode=1777 --cap-drop ALL --security-opt no-new-privileges)
run_bg() {
  local name=$1
  shift
  t 120 podman run -d --name "$id-$name" --pod "$id" --label "gpuops-smoke=$id" "$@" \
    2> >(quiet >&2) >/dev/null
}
# A one-off container in the pod running drive.mjs with the image's Node.
drive() {
  t 120 podman run --rm --pod "$id" --label "gpuops-smoke=$id" "${HARDENED[@]}" \
    -v "$IMAGE_DIR/smoke:/smoke:ro" --entrypoint node \
    -e SMOKE_SIGNING_SECRET="$signing_secret" -e SMOKE_SLACK_URL="http://127.0.0.1:4100" \
    "$@"
}
# Waits (up to $2 s) for a line matching $3 in a container's log.
wait_log() {
  local name=$1 secs=$2 pattern=$3 deadline=$((SECONDS + $2))
  while [ "$SECONDS" -lt "$deadline" ]; do
    t 30 podman logs "$id-$name" 2>&1 | grep -qE "$pattern" && return 0
    [ "$(t 30 podman inspect --format '{{.State.Running}}' "$id-$name" 2>/dev/null)" = true ] || break
    sleep 0.5
  done
  log "$name: no line matching /$pattern/ within ${secs}s; its log ends:"
  t 30 podman logs --tail 15 "$id-$name" 2>&1 | sed 's/^/       /'
  return 1
}
# SIGTERM (podman stop with the grace period); passes when it exits 0 before the grace period ends.
stop_drains() {
  local name=$1 t0=$SECONDS code
  t $((grace + 30)) podman stop -t "$grace" "$id-$name" >/dev/null 2>&1
  code="$(t 30 podman inspect --format '{{.State.ExitCode}}' "$id-$name")"
  echo "exit $code after $((SECONDS - t0)) s (grace ${grace} s)"
  [ "$code" = 0 ] && [ $((SECONDS - t0)) -lt "$grace" ]
}

exec 2> >(quiet >&2)
# Ports in the pod: web 3000 (ops 9090), worker ops 9091, start 3001 (ops 9092), sim 4000, Slack's
# side 4100, Redis 6379.
t 60 podman pod create --name "$id" --label "gpuops-smoke=$id" --network none >/dev/null \
  || die "podman pod create failed"
log "pod $id; image $APP_IMAGE ($(t 60 podman image inspect --format '{{.Size}}' "$APP_IMAGE" | awk '{printf "%.0f MB", $1/1e6}'))"

# --- Redis, the cloud simulator (role sim) and Slack's side ------------------------------------
run_bg redis "$REDIS_IMAGE" --save '' --appendonly no || die "redis did not start"
run_bg sim "${HARDENED[@]}" "$APP_IMAGE" sim --host 127.0.0.1 --port 4000 --no-metrics --shape B --seed 1 \
  || die "sim did not start"
run_bg slack "${HARDENED[@]}" -v "$IMAGE_DIR/smoke:/smoke:ro" --entrypoint node \
  -e SMOKE_BOT_TOKEN="$bot_token" "$APP_IMAGE" /smoke/drive.mjs slack || die "slack side did not start"
check "role sim starts and prints its ready line" wait_log sim 30 '^\{.*"cloudUrl"'
check "Slack's side (fake Web API from dist/) listens" wait_log slack 30 'listening'
check "redis starts" wait_log redis 30 'Ready to accept connections'
ready="$(t 30 podman logs "$id-sim" 2>/dev/null | grep -m1 '^{')"
field() { printf '%s' "$ready" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.stdout.write(String(JSON.parse(s)[process.argv[1]]??"")))' "$1"; }
umask 077
cat >"$envfile" <<EOF
SLACK_BOT_TOKEN=$bot_token
SLACK_SIGNING_SECRET=$signing_secret
SLACK_API_URL=http://127.0.0.1:4100/api/
REDIS_URL=redis://127.0.0.1:6379
CLOUD_API_URL=$(field cloudUrl)
CLOUD_API_SHAPE=B
CLOUD_API_TOKEN=$(field cloudToken)
CLOUD_PROJECT_ID=$(field projectId)
PLATFORM_API_URL=$(field platformUrl)
PLATFORM_API_KEY=$(field platformApiKey)
LOG_LEVEL=info
EOF
umask 022

# --- role start (listener and workers in one process), on its own Redis database -------------------
run_bg all "${HARDENED[@]}" --env-file "$envfile" -e REDIS_URL=redis://127.0.0.1:6379/1 \
  -e PORT=3001 -e OPS_PORT=9092 "$APP_IMAGE" start \
  || bad "role start: podman run failed"
check "role start: /healthz and /readyz on OPS_PORT" \
  drive "$APP_IMAGE" /smoke/drive.mjs probe http://127.0.0.1:9092/healthz http://127.0.0.1:9092/readyz
check "role start: SIGTERM drains and exits 0" stop_drains all

# --- role demo (a scripted session), on another Redis database -------------------------------------
demo() {
  printf '/gpu help\n' | t 120 podman run --rm -i --pod "$id" --label "gpuops-smoke=$id" "${HARDENED[@]}" \
    -e REDIS_URL=redis://127.0.0.1:6379/2 "$APP_IMAGE" demo --no-metrics --script - >"$WORK_DIR/$id-demo.log" 2>&1
  local rc=$?
  [ "$rc" -eq 0 ] || tail -15 "$WORK_DIR/$id-demo.log"
  rm -f "$WORK_DIR/$id-demo.log"
  return "$rc"
}
check "role demo: runs a script and exits 0" demo

# --- roles web and worker: a signed request answered through the queue ----------------------------
run_bg web "${HARDENED[@]}" --env-file "$envfile" "$APP_IMAGE" web || bad "role web: podman run failed"
run_bg worker "${HARDENED[@]}" --env-file "$envfile" -e OPS_PORT=9091 "$APP_IMAGE" worker || bad "role worker: podman run failed"
check "role web: /healthz and /readyz on OPS_PORT" \
  drive "$APP_IMAGE" /smoke/drive.mjs probe http://127.0.0.1:9090/healthz http://127.0.0.1:9090/readyz
check "role worker: /healthz and /readyz on OPS_PORT" \
  drive "$APP_IMAGE" /smoke/drive.mjs probe http://127.0.0.1:9091/healthz http://127.0.0.1:9091/readyz
check "the image's HEALTHCHECK passes (kept by --format docker)" t 60 podman healthcheck run "$id-web"
tails() {
  local name
  for name in "$@"; do
    log "$name: the end of its log"
    t 30 podman logs --tail 12 "$id-$name" 2>&1 | cut -c1-400 | sed 's/^/       /'
  done
}
check "signed /gpu configs: acknowledged by web, answered by the worker container" \
  drive -e SMOKE_WEB_URL=http://127.0.0.1:3000 -e SMOKE_TEXT=configs "$APP_IMAGE" /smoke/drive.mjs command \
  || tails web worker slack
check "the job ran in the worker container" wait_log worker 10 '"msg":"job done"'

# --- the process and its code ---------------------------------------------------------------------
own_code() {
  # In the read-only container, and in one with a writable root: root-owned code stays unwritable.
  local probe='const fs=require("fs");if(process.getuid()===0){console.log("runs as root");process.exit(1)}
for(const f of ["/app/dist/cli.js","/app/bin/gpuops.js","/app/package.json","/app/node_modules/zod/package.json"]){
try{fs.appendFileSync(f,"");console.log("writable: "+f);process.exit(1)}catch(e){if(!["EACCES","EROFS","EPERM"].includes(e.code))throw e}}
try{fs.writeFileSync("/app/new.js","");console.log("can create files in /app");process.exit(1)}catch{}
console.log("uid "+process.getuid()+", gid "+process.getgid()+": code not writable")'
  t 60 podman exec "$id-web" node -e "$probe" || return 1
  t 60 podman run --rm --network none --label "gpuops-smoke=$id" --entrypoint node "$APP_IMAGE" -e "$probe"
}
check "non-root, and cannot write its own code (even with a writable root filesystem)" own_code
check "role web: SIGTERM drains and exits 0" stop_drains web
check "role worker: SIGTERM drains and exits 0" stop_drains worker

# --- secrets in the image -------------------------------------------------------------------------
no_secrets() {
  local history
  history="$(t 60 podman history --no-trunc --format '{{.CreatedBy}} {{.Comment}}' "$APP_IMAGE")" || return 1
  if printf '%s' "$history" | grep -qE "$bot_token|$signing_secret|BEGIN CERTIFICATE|_authToken|registry="; then
    echo "the history holds a secret"
    return 1
  fi
  mkdir -p "$save_dir"
  t 300 podman save --quiet --format docker-archive -o "$save_dir/image.tar" "$APP_IMAGE" || return 1
  tar -xf "$save_dir/image.tar" -C "$save_dir" && rm -f "$save_dir/image.tar"
  local layers=0 layer
  while IFS= read -r layer; do
    layers=$((layers + 1))
    if tar -tf "$layer" | grep -qE '(^|/)(\.npmrc|run/secrets/.+)$'; then
      echo "$layer holds an .npmrc or a build secret"
      return 1
    fi
  done < <(find "$save_dir" -name '*.tar' -o -name 'layer.tar' | sort -u)
  if grep -rqaE "$bot_token|$signing_secret|_authToken=" "$save_dir"; then
    echo "a layer holds a token"
    return 1
  fi
  rm -rf "$save_dir"
  echo "$layers layers and the history: no token, no .npmrc, no build secret"
}
check "no secret in the image's layers or history" no_secrets

# --- Kubernetes kit -------------------------------------------------------------------------------
if [ "$kube" -eq 1 ] && [ -x "$IMAGE_DIR/kube-play.sh" ]; then
  check "Kubernetes kit under podman kube play answers a signed request" bash "$IMAGE_DIR/kube-play.sh"
fi

if [ "$failures" -gt 0 ]; then
  log "FAILED: $failures check(s) failed in $((SECONDS - started)) s"
  exit 1
fi
log "passed in $((SECONDS - started)) s"
