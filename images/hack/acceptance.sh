#!/usr/bin/env bash
# Acceptance run of issue 16: on two fresh clones of HEAD, `go tool mage images`, then `go tool mage bundle`, then
# `go tool mage catalog` succeed and give identical digests, with a local registry and a stand-in sdist index
# (images/hack/standins.sh), and the committed requirements.txt.ocp is left as committed.
#
# What is substituted, because this machine cannot reach it (each is printed again when the run starts):
#  - botocore: the real botocore-1.34.140.tar.gz (sha256 86302b22…, pinned in requirements.txt.ocp) could not be
#    obtained here; a stand-in sdist is served from a local PEP 503 index, and the targets read
#    WHEELS_REQUIREMENTS=$W/requirements.stand-in.txt, the committed file with only that hash replaced. `mage
#    wheels` says so on every run. Before the two runs, the committed file itself is fetched against the stand-in
#    index and must be refused.
#  - the runtime base (RHEL 9 with python3, stunnel, nfs-utils), the opm base and the sidecars: synthetic images.
# The Go build cache and module cache are the machine's; only the clones and their _output are fresh.
# Usage: images/hack/acceptance.sh [scratch dir]   (run from the repository root, as root, with /usr/bin/python3)
set -euo pipefail
W=${1:-$(mktemp -d)}
ROOT=$(pwd)
REG_PID= IDX_PID=
cleanup() { kill $REG_PID $IDX_PID 2>/dev/null || true; }
trap cleanup EXIT
. "$ROOT/images/hack/standins.sh"
HEAD=$(git -C "$ROOT" rev-parse HEAD)
[ -z "$(git -C "$ROOT" status --porcelain --untracked-files=no)" ] ||
  echo "acceptance: the working tree has uncommitted changes; the clones run HEAD $HEAD without them"

cat <<EOF
================================================================================================================
acceptance: SUBSTITUTION: botocore 1.34.140 comes from a STAND-IN sdist (sha256 $STANDIN_SHA256)
acceptance: served by http://$IDX/simple; the committed requirements.txt.ocp pins the real sdist
acceptance: (sha256 $COMMITTED_SHA256), which is not available here. The targets read
acceptance: WHEELS_REQUIREMENTS=$W/requirements.stand-in.txt, which differs from the committed file only in:
$(diff "$ROOT/requirements.txt.ocp" "$W/requirements.stand-in.txt" | sed 's/^/acceptance:   /' || true)
acceptance: Also stand-ins: the runtime base ($AWS_EFS_UTILS_BASE_FROM), the opm base ($CATALOG_BASE), the sidecars.
================================================================================================================
EOF

# The committed pins refuse the stand-in: a build from requirements.txt.ocp can never ship it.
git clone -q "$ROOT" "$W/refuse" && git -C "$W/refuse" checkout -q --detach "$HEAD"
if (cd "$W/refuse" && env -u WHEELS_REQUIREMENTS go tool mage wheels) >"$W/refuse.log" 2>&1; then
  cat "$W/refuse.log"; echo "acceptance: FAILED: mage wheels accepted the stand-in sdist with the committed requirements.txt.ocp"; exit 1
fi
grep -q "DO NOT MATCH THE HASHES" "$W/refuse.log" || { cat "$W/refuse.log"; echo "acceptance: FAILED: mage wheels failed for another reason"; exit 1; }
echo "acceptance: the committed requirements.txt.ocp refuses the stand-in sdist: $(grep -o 'none of the .*pinned hash' "$W/refuse.log" | head -1)"
rm -rf "$W/refuse"

for run in 1 2; do
  C=$W/clone$run
  git clone -q "$ROOT" "$C" && git -C "$C" checkout -q --detach "$HEAD"
  for target in images bundle catalog; do
    start=$(date +%s)
    (cd "$C" && go tool mage "$target") >"$W/run$run-$target.log" 2>&1 || {
      cat "$W/run$run-$target.log"; echo "acceptance: FAILED: run $run: go tool mage $target"; exit 1; }
    echo "acceptance: run $run: go tool mage $target: ok in $(( $(date +%s) - start )) s"
  done
  grep -q "WARNING: WHEELS_REQUIREMENTS=" "$W/run$run-images.log" ||
    { echo "acceptance: FAILED: run $run: mage did not announce the replaced requirements file"; exit 1; }
  git -C "$C" diff --quiet HEAD -- requirements.txt.ocp ||
    { echo "acceptance: FAILED: run $run changed requirements.txt.ocp"; exit 1; }
  cat "$C"/_output/{images,bundle-image,catalog-image}/digests.json >"$W/digests$run.json"
  rm -rf "$C"
done

echo "acceptance: requirements.txt.ocp is as committed in both clones (sha256 $(sha256sum "$ROOT/requirements.txt.ocp" | cut -c1-12)…)"
if cmp -s "$W/digests1.json" "$W/digests2.json"; then
  echo "acceptance: two fresh clones of $HEAD gave identical digests:"
  /usr/bin/python3 -c 'import json,sys
for d in json.loads("[" + open(sys.argv[1]).read().replace("]\n[", ",") + "]")[0]: print("acceptance:   %-40s %s" % (d["name"], d["digest"]))' "$W/digests2.json"
  echo "acceptance: NOT exercised: the real botocore sdist, the real RHEL 9 runtime and opm bases, the real sidecars"
else
  diff "$W/digests1.json" "$W/digests2.json"; echo "acceptance: FAILED: the two runs' digests differ"; exit 1
fi
