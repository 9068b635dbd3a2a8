#!/usr/bin/env bash
# Removes whatever an interrupted smoke test may have left: containers labelled gpuops-smoke, their
# pods, the pods `podman kube play` made from the kit, and networks named gpuops-smoke-*/gpuops-kube-*.
# .ci/run calls it after npm run image:smoke, which cleans up after itself unless it was killed.
set -uo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
command -v podman >/dev/null 2>&1 || exit 0
ids="$(t 60 podman ps -aq --filter label=gpuops-smoke 2>/dev/null)"
[ -z "$ids" ] || t 120 podman rm -f -t 0 $ids >/dev/null 2>&1
for pod in $(t 60 podman pod ps --format '{{.Name}}' 2>/dev/null | grep -E '^(gpuops-smoke-|gpuops-(redis|web|worker)-pod-)'); do
  t 120 podman pod rm -f -t 0 "$pod" >/dev/null 2>&1
done
for net in $(t 60 podman network ls --format '{{.Name}}' 2>/dev/null | grep -E '^gpuops-(smoke|kube)-'); do
  t 60 podman network rm -f "$net" >/dev/null 2>&1
done
left="$(t 60 podman ps -q --filter label=gpuops-smoke 2>/dev/null | wc -l)"
[ "$left" -eq 0 ] || die "$left smoke-test containers still running"
exit 0
