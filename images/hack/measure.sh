#!/usr/bin/env bash
# Acceptance and performance run of `go tool mage images` on this machine, with no network beyond loopback:
#  - a real registry on 127.0.0.1 (go-containerregistry's, via `crane registry serve`);
#  - RHEL-shaped synthetic runtime bases for the four platforms, pushed with crane and pulled into an OCI layout
#    (python3 -> python3.9, stunnel, mount.nfs4, /sbin -> usr/sbin, /var/run -> ../run);
#  - a local PEP 503 index serving a stand-in botocore wheel (PyPI is unreachable here), pinned by hash in a
#    scratch requirements file.
# It then times three runs (cold, warm, after changing only the driver binary) and prints the bytes pushed.
# Usage: images/hack/measure.sh [scratch dir]   (run from the repository root)
set -euo pipefail
W=${1:-$(mktemp -d)}
ROOT=$(pwd)
PORT=${PORT:-5117}
IDXPORT=${IDXPORT:-5118}
R=127.0.0.1:$PORT
mkdir -p "$W/registry"
REG_PID= IDX_PID=
cleanup() { kill $REG_PID $IDX_PID 2>/dev/null || true; }
# crane is a Go tool of magefiles; build it once so the registry's PID is crane's own (go tool runs a child).
go build -C "$ROOT/magefiles" -o "$W/crane" github.com/google/go-containerregistry/cmd/crane
crane() { "$W/crane" "$@"; }
"$W/crane" registry serve --address "$R" --disk "$W/registry" >"$W/registry.log" 2>&1 &
REG_PID=$!
trap cleanup EXIT
sleep 1

# Synthetic runtime base, one image per platform, one index.
B=$W/base && rm -rf "$B" && mkdir -p "$B/usr/bin" "$B/usr/sbin" "$B/usr/lib64/python3.9" "$B/run" "$B/var" "$B/etc"
ln -s usr/sbin "$B/sbin"; ln -s usr/bin "$B/bin"; ln -s ../run "$B/var/run"
printf 'python' >"$B/usr/bin/python3.9"; ln -s python3.9 "$B/usr/bin/python3"; echo '# os' >"$B/usr/lib64/python3.9/os.py"
printf 'stunnel' >"$B/usr/bin/stunnel"; printf 'mount.nfs' >"$B/usr/sbin/mount.nfs"; ln -s mount.nfs "$B/usr/sbin/mount.nfs4"
chmod 0755 "$B/usr/bin/python3.9" "$B/usr/bin/stunnel" "$B/usr/sbin/mount.nfs"
echo 'ID=rhel' >"$B/etc/os-release"
tar --sort=name --owner=0 --group=0 --mtime=@0 -C "$B" -cf "$W/base.tar" .
manifests=()
for arch in amd64 arm64 ppc64le s390x; do
  crane append --oci-empty-base -f "$W/base.tar" -t "$R/base/rhel-like:tmp-$arch" >/dev/null
  crane mutate "$R/base/rhel-like:tmp-$arch" --set-platform "linux/$arch" -t "$R/base/rhel-like:$arch" >/dev/null
  manifests+=(-m "$R/base/rhel-like:$arch")
done
crane index append "${manifests[@]}" -t "$R/base/rhel-like:9" >/dev/null
rm -rf "$W/base-layout" && crane pull --format=oci "$R/base/rhel-like:9" "$W/base-layout"

# Stand-in botocore wheel on a local PEP 503 index, pinned by its real sha256.
I=$W/index && rm -rf "$I" && mkdir -p "$I/simple/botocore"
/usr/bin/python3 - "$I" <<'PY'
import base64, hashlib, os, sys, zipfile
root = sys.argv[1]
name = "botocore-1.34.140-py3-none-any.whl"
files = {"botocore/__init__.py": "__version__ = '1.34.140'  # stand-in for tests\n",
         "botocore-1.34.140.dist-info/METADATA": "Metadata-Version: 2.1\nName: botocore\nVersion: 1.34.140\n",
         "botocore-1.34.140.dist-info/WHEEL": "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
record = ""
with zipfile.ZipFile(os.path.join(root, name), "w") as z:
    for n, c in sorted(files.items()):
        z.writestr(zipfile.ZipInfo(n, (1980, 1, 1, 0, 0, 0)), c)
        d = base64.urlsafe_b64encode(hashlib.sha256(c.encode()).digest()).rstrip(b"=").decode()
        record += "%s,sha256=%s,%d\n" % (n, d, len(c))
    record += "botocore-1.34.140.dist-info/RECORD,,\n"
    z.writestr(zipfile.ZipInfo("botocore-1.34.140.dist-info/RECORD", (1980, 1, 1, 0, 0, 0)), record)
h = hashlib.sha256(open(os.path.join(root, name), "rb").read()).hexdigest()
open(os.path.join(root, "simple/botocore/index.html"), "w").write('<a href="../../%s#sha256=%s">%s</a>\n' % (name, h, name))
open(os.path.join(root, "requirements.txt"), "w").write("botocore==1.34.140 --hash=sha256:%s\n" % h)
PY
(cd "$I" && exec /usr/bin/python3 -m http.server --bind 127.0.0.1 "$IDXPORT" >"$W/index.log" 2>&1) &
IDX_PID=$!
sleep 1

export AWS_EFS_UTILS_BASE_FROM="oci:$W/base-layout" AWS_EFS_CSI_DRIVER_OPERATOR_FROM="oci:$W/base-layout"
export REGISTRY="$R/openshift" WHEELS_INDEX_URL="http://127.0.0.1:$IDXPORT/simple" WHEELS_REQUIREMENTS="$I/requirements.txt"
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1767225600}

run() {
  local label=$1 start end
  start=$(date +%s.%N)
  go tool mage images >"$W/$label.log" 2>&1 || { cat "$W/$label.log"; exit 1; }
  end=$(date +%s.%N)
  printf '%-12s %6.1f s   ' "$label" "$(echo "$end - $start" | bc)"
  { grep -o '([^()]*uploaded)' "$W/$label.log" || true; } | tr '\n' ' '
  echo "layers built: $(grep -c ' built (' "$W/$label.log" || true)"
}

# The binaries are `build`'s (gobuild fingerprints); compile them before timing so the runs measure images only.
go tool mage build >"$W/build.log" 2>&1 || { cat "$W/build.log"; exit 1; }
rm -rf "$ROOT/_output/images"
run cold
cp "$ROOT/_output/images/digests.json" "$W/cold-digests.json"
run warm
# Change only the driver binary (as a new driver commit would): append a byte to each platform's binary and
# keep its fingerprint valid, so `mage build` does not recompile it back.
for d in "$ROOT"/_output/bin/linux_*; do
  cp -p "$d/aws-efs-csi-driver" "$d/.aws-efs-csi-driver.orig"
  cp -p "$d/.aws-efs-csi-driver.fingerprint" "$d/.aws-efs-csi-driver.fingerprint.orig"
  printf 'x' >>"$d/aws-efs-csi-driver"
  sum=$(sha256sum "$d/aws-efs-csi-driver" | cut -d' ' -f1)
  sed -i "s/^output .*/output $sum/" "$d/.aws-efs-csi-driver.fingerprint"
done
run driver-only
for img in aws-efs-utils-base aws-efs-csi-driver aws-efs-csi-driver-operator; do
  tag=$(/usr/bin/python3 -c "import json,sys; print([d['tag'] for d in json.load(open('$ROOT/_output/images/digests.json')) if d['name']=='$img'][0])")
  echo "== crane manifest $R/openshift/$img:$tag"
  crane manifest "$R/openshift/$img:$tag" | /usr/bin/python3 -c 'import json,sys; m=json.load(sys.stdin); print(m["mediaType"], [p["platform"]["architecture"] for p in m["manifests"]])'
done
# Restore the real driver binaries, then build again from nothing: the digests must equal the cold run's.
for d in "$ROOT"/_output/bin/linux_*; do
  mv "$d/.aws-efs-csi-driver.orig" "$d/aws-efs-csi-driver"
  mv "$d/.aws-efs-csi-driver.fingerprint.orig" "$d/.aws-efs-csi-driver.fingerprint"
done
rm -rf "$ROOT/_output/images"
run clean-again
if cmp -s "$W/cold-digests.json" "$ROOT/_output/images/digests.json"; then
  echo "two clean builds: identical digests.json (index and per-platform manifest digests)"
else
  echo "two clean builds: digests differ"; diff "$W/cold-digests.json" "$ROOT/_output/images/digests.json"; exit 1
fi
