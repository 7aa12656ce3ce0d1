#!/usr/bin/env bash
# Performance run of `go tool mage images`, `bundle` and `catalog` on this machine, with no network beyond
# loopback, on the stand-ins of images/hack/standins.sh (registry, runtime and opm bases, sidecars, botocore sdist).
# It times `mage images` cold, warm and after changing only the driver binary, then runs images, bundle and
# catalog twice from clean output directories and compares every digest.
# Usage: images/hack/measure.sh [scratch dir]   (run from the repository root, as root, with /usr/bin/python3)
set -euo pipefail
W=${1:-$(mktemp -d)}
ROOT=$(pwd)
REG_PID= IDX_PID=
cleanup() { kill $REG_PID $IDX_PID 2>/dev/null || true; }
trap cleanup EXIT
. "$ROOT/images/hack/standins.sh"
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1767225600}

run() { # label target...
  local label=$1 start end; shift
  start=$(date +%s.%N)
  go tool mage "$@" >"$W/$label.log" 2>&1 || { cat "$W/$label.log"; exit 1; }
  end=$(date +%s.%N)
  printf '%-14s %6.1f s   ' "$label" "$(echo "$end - $start" | bc)"
  { grep -o '([^()]*uploaded)' "$W/$label.log" || true; } | tr '\n' ' '
  echo "layers built: $(grep -c ' built (' "$W/$label.log" || true)"
}
clean() { rm -rf "$ROOT"/_output/{images,bundle,bundle-image,catalog,catalog-image}; }
digests() { cat "$ROOT"/_output/{images,bundle-image,catalog-image}/digests.json; }

# The binaries are `build`'s (gobuild fingerprints); compile them before timing so the runs measure images only.
go tool mage build wheels >"$W/build.log" 2>&1 || { cat "$W/build.log"; exit 1; }
clean
run cold images
run warm images
# Change only the driver binary (as a new driver commit would): append a byte to each platform's binary and
# keep its fingerprint valid, so `mage build` does not recompile it back.
for d in "$ROOT"/_output/bin/linux_*; do
  cp -p "$d/aws-efs-csi-driver" "$d/.aws-efs-csi-driver.orig"
  cp -p "$d/.aws-efs-csi-driver.fingerprint" "$d/.aws-efs-csi-driver.fingerprint.orig"
  printf 'x' >>"$d/aws-efs-csi-driver"
  sum=$(sha256sum "$d/aws-efs-csi-driver" | cut -d' ' -f1)
  sed -i "s/^output .*/output $sum/" "$d/.aws-efs-csi-driver.fingerprint"
done
run driver-only images
for d in "$ROOT"/_output/bin/linux_*; do
  mv "$d/.aws-efs-csi-driver.orig" "$d/aws-efs-csi-driver"
  mv "$d/.aws-efs-csi-driver.fingerprint.orig" "$d/.aws-efs-csi-driver.fingerprint"
done
# Two clean runs of images, bundle and catalog: every digest must be the same.
clean
run first-images images; run first-bundle bundle; run first-catalog catalog
digests >"$W/first-digests.json"
clean
run second-images images; run second-bundle bundle; run second-catalog catalog
digests >"$W/second-digests.json"
for img in aws-efs-utils-base aws-efs-csi-driver aws-efs-csi-driver-operator aws-efs-csi-driver-operator-bundle aws-efs-csi-driver-operator-catalog; do
  echo "== $img: $(crane manifest "$(/usr/bin/python3 -c "import json,glob
for f in glob.glob('$ROOT/_output/*/digests.json'):
    for d in json.load(open(f)):
        if d['name']=='$img': print(d['reference'])")" | /usr/bin/python3 -c 'import json,sys; m=json.load(sys.stdin); print(m["mediaType"], [p["platform"]["architecture"] for p in m["manifests"]])')"
done
if cmp -s "$W/first-digests.json" "$W/second-digests.json"; then
  echo "two clean runs of images, bundle and catalog: identical digests"; cat "$W/second-digests.json" | grep '"digest"'
else
  echo "two clean runs: digests differ"; diff "$W/first-digests.json" "$W/second-digests.json"; exit 1
fi
