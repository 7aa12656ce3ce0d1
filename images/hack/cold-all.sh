#!/usr/bin/env bash
# Cold `go tool mage all`, one commit after the other: for each commit, a fresh clone of this repository, its
# modules downloaded (not timed), then `go tool mage all` with an empty GOCACHE under /usr/bin/time (wall time, and
# the user and system CPU time of every process the run waited for: mage, go, the compilers and linkers). The load
# average is sampled every 30 s, because on a shared machine the wall time depends on it.
# Usage: images/hack/cold-all.sh <commit>...   (from the repository root; e.g. 2f2d439 HEAD)
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: $0 <commit>..." >&2; exit 2; }
ROOT=$(pwd)
W=$(mktemp -d)
(while sleep 30; do echo "$(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)"; done) >"$W/load.log" &
SAMPLER=$!
trap 'kill $SAMPLER 2>/dev/null || true' EXIT
for rev in "$@"; do
  d=$W/$(git -C "$ROOT" rev-parse --short "$rev")
  git clone -q "$ROOT" "$d" && git -C "$d" checkout -q --detach "$rev"
  # Best effort: `go mod download` also asks for versions no build needs, some of which the proxy does not serve;
  # what the build needs and this did not fetch is downloaded (and timed) by the run.
  (cd "$d" && go mod download; cd magefiles && go mod download) >/dev/null 2>&1 || true
  cache=$(mktemp -d "$W/gocache.XXXX")
  echo "== $rev: start $(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"
  (cd "$d" && GOCACHE=$cache nice -n 10 /usr/bin/time -f "%e s wall, %U s user, %S s sys" go tool mage all) >"$d.log" 2>&1 ||
    { tail -20 "$d.log"; exit 1; }
  echo "== $rev: end $(date -u +%T): $(tail -1 "$d.log")"
  grep "done in" "$d.log" || true
  rm -rf "$d" "$cache"
done
echo "load average samples: $W/load.log"
