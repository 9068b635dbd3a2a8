#!/usr/bin/env bash
# The Kubernetes kit started for real: `podman kube play` runs Redis, web and worker from
# manifests/kubernetes (through kube-overlay.mjs: local images, hostAliases for DNS) next to the cloud
# simulator and Slack's side, then a signed /gpu request must be acknowledged by the web pod and
# answered by the worker pod. Run by smoke.sh after the images are built; leaves nothing behind.
set -uo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
LOG_PREFIX="kube-play:"

id="gpuops-kube-$$"
net="$id"
kit="$WORK_DIR/$id.yaml"
quiet() { grep -vE 'unable to get systemd connection|failed to connect to syslog' || true; }
exec 2> >(quiet >&2)
# podman kube play keeps a ConfigMap volume as a podman volume named after it, which kube down leaves.
had_volume=0
t 60 podman volume exists gpuops && had_volume=1
cleanup() {
  [ -f "$kit" ] && t 180 podman kube down "$kit" >/dev/null 2>&1
  [ "$had_volume" -eq 1 ] || t 60 podman volume rm -f gpuops >/dev/null 2>&1
  local ids
  ids="$(t 60 podman ps -aq --filter "label=gpuops-smoke=$id" 2>/dev/null)"
  [ -z "$ids" ] || t 120 podman rm -f -t 0 $ids >/dev/null 2>&1
  t 60 podman network rm -f "$net" >/dev/null 2>&1
  rm -f "$kit"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
for image in "$APP_IMAGE" "$REDIS_IMAGE"; do
  image_exists "$image" || die "$image is missing: run npm run image:build"
done

# A network without DNS (pods find each other through hostAliases), on a free private subnet.
prefix=""
for _ in 1 2 3 4 5 6 7 8; do
  candidate="10.213.$((RANDOM % 200 + 20))"
  if t 60 podman network create --disable-dns --subnet "$candidate.0/24" "$net" >/dev/null 2>&1; then
    prefix="$candidate"
    break
  fi
done
[ -n "$prefix" ] || die "could not create a podman network"
redis_ip="$prefix.10" web_ip="$prefix.11" worker_ip="$prefix.12" sim_ip="$prefix.20" slack_ip="$prefix.21"

bot_token="xoxb-kube-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
signing_secret="kube-signing-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
helper() {
  local name=$1 ip=$2
  shift 2
  t 120 podman run -d --name "$id-$name" --network "$net" --ip "$ip" --label "gpuops-smoke=$id" \
    --read-only --tmpfs /tmp --cap-drop ALL --security-opt no-new-privileges "$@" >/dev/null
}
helper sim "$sim_ip" "$APP_IMAGE" sim --host 0.0.0.0 --port 4000 --no-metrics --shape B || die "sim did not start"
helper slack "$slack_ip" -v "$IMAGE_DIR/smoke:/smoke:ro" --entrypoint node -e SMOKE_BOT_TOKEN="$bot_token" \
  "$APP_IMAGE" /smoke/drive.mjs slack || die "Slack's side did not start"
ready=""
for _ in $(seq 60); do
  ready="$(t 30 podman logs "$id-sim" 2>/dev/null | grep -m1 '^{')" && [ -n "$ready" ] && break
  sleep 0.5
done
[ -n "$ready" ] || die "the simulator printed no ready line"
field() { printf '%s' "$ready" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.stdout.write(String(JSON.parse(s)[process.argv[1]]??"")))' "$1"; }
at_sim() { sed -E 's#^(https?://)[^/:]+#\1gpuops-smoke-sim#'; }

umask 077
KUBE_APP_IMAGE="$APP_IMAGE" KUBE_REDIS_IMAGE="$REDIS_IMAGE" \
  KUBE_HOSTS="gpuops-redis=$redis_ip,gpuops-smoke-sim=$sim_ip,gpuops-smoke-slack=$slack_ip" \
  KUBE_CONFIG_JSON="$(node -e 'console.log(JSON.stringify({SLACK_API_URL:process.argv[1],CLOUD_API_URL:process.argv[2],CLOUD_PROJECT_ID:process.argv[3],PLATFORM_API_URL:process.argv[4]}))' \
    "http://gpuops-smoke-slack:4100/api/" "$(field cloudUrl | at_sim)" "$(field projectId)" "$(field platformUrl | at_sim)")" \
  KUBE_SECRET_JSON="$(node -e 'console.log(JSON.stringify({SLACK_BOT_TOKEN:process.argv[1],SLACK_SIGNING_SECRET:process.argv[2],CLOUD_API_TOKEN:process.argv[3],PLATFORM_API_KEY:process.argv[4]}))' \
    "$bot_token" "$signing_secret" "$(field cloudToken)" "$(field platformApiKey)")" \
  node "$IMAGE_DIR/kube-overlay.mjs" "$REPO_DIR/manifests/kubernetes" >"$kit" || die "kube-overlay.mjs failed"
umask 022

# Pods get their IPs in the order of the YAML: Redis, web, worker.
t 300 podman kube play --network "$net" --ip "$redis_ip" --ip "$web_ip" --ip "$worker_ip" "$kit" \
  >"$WORK_DIR/$id.play.log" 2>&1 || {
  quiet <"$WORK_DIR/$id.play.log" | tail -20 >&2
  rm -f "$WORK_DIR/$id.play.log"
  die "podman kube play failed"
}
rm -f "$WORK_DIR/$id.play.log"
echo "pods: $(t 60 podman pod ps --filter "name=gpuops-" --format '{{.Name}}={{.Status}}' | tr '\n' ' ')"

drive() {
  t 120 podman run --rm --network "$net" --label "gpuops-smoke=$id" --read-only --cap-drop ALL \
    -v "$IMAGE_DIR/smoke:/smoke:ro" --entrypoint node -e SMOKE_SIGNING_SECRET="$signing_secret" \
    -e SMOKE_SLACK_URL="http://$slack_ip:4100" -e SMOKE_TIMEOUT_MS=60000 "$@"
}
status=0
drive "$APP_IMAGE" /smoke/drive.mjs probe "http://$web_ip:9090/readyz" "http://$worker_ip:9090/readyz" || status=1
if [ "$status" -eq 0 ]; then
  drive -e SMOKE_WEB_URL="http://$web_ip:3000" -e SMOKE_TEXT=configs "$APP_IMAGE" /smoke/drive.mjs command || status=1
fi
# As the manifests ask: uid 1000, read-only root filesystem, no capabilities.
container() { t 60 podman ps -a --filter "name=^$1-pod" --format '{{.Names}}' | grep -v infra | head -1; }
for c in "$(container gpuops-web)" "$(container gpuops-worker)"; do
  shown="$(t 60 podman inspect --format '{{.Config.User}} ro={{.HostConfig.ReadonlyRootfs}} caps={{.EffectiveCaps}}' "$c" 2>&1)"
  echo "$c: $shown"
  case "$shown" in 1000*"ro=true caps=[]") ;; *) status=1 ;; esac
done
if [ "$status" -ne 0 ]; then
  for c in "$(container gpuops-redis)" "$(container gpuops-web)" "$(container gpuops-worker)"; do
    echo "$c: the end of its log"
    t 30 podman logs --tail 10 "$c" 2>&1 | cut -c1-300 | sed 's/^/  /'
  done
fi
exit "$status"
