# Stand-ins for what this machine cannot reach, for images/hack/measure.sh and images/hack/acceptance.sh (sourced,
# not run): every network peer is on loopback.
#  - a real registry on 127.0.0.1 (go-containerregistry's, via `crane registry serve`) on a free port;
#  - a synthetic runtime base for linux/amd64 and linux/arm64 in an OCI layout, standing in for an image of the
#    runtime stage of images/aws-efs-utils-base/Containerfile and for BASE_IMAGE (python3 -> python3.N with the
#    host's N, so the efs-utils bytecode can be compiled here; stunnel, mount.nfs4, /sbin -> usr/sbin,
#    /var/run -> ../run);
#  - a local PEP 503 index serving a stand-in botocore sdist (PyPI is unreachable here, and the real
#    botocore-1.34.140.tar.gz could not be obtained from any reachable source), and $W/requirements.stand-in.txt:
#    a copy of the committed requirements.txt.ocp in which only botocore's sha256 is the stand-in's. The committed
#    file pins the real sdist, which the stand-in cannot match;
#  - stand-in sidecar images pushed to the registry and pinned by their digests (BUNDLE_IMAGES), and an opm base
#    holding the real opm binary (amd64; the arm64 entry holds the same binary and is not run).
# Needs W (scratch directory) and ROOT (repository root) set; sets R, IDX, REG_PID, IDX_PID, crane(), and exports
# the variables the mage targets read. The caller stops REG_PID and IDX_PID.
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
R=127.0.0.1:$(free_port)
IDX=127.0.0.1:$(free_port)
mkdir -p "$W/registry"
# crane is a Go tool of magefiles; build it once so the registry's PID is crane's own (go tool runs a child).
go build -C "$ROOT/magefiles" -o "$W/crane" github.com/google/go-containerregistry/cmd/crane
crane() { "$W/crane" "$@"; }
"$W/crane" registry serve --address "$R" --disk "$W/registry" >"$W/registry.log" 2>&1 &
REG_PID=$!
sleep 1

PY=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
B=$W/base && rm -rf "$B" && mkdir -p "$B/usr/bin" "$B/usr/sbin" "$B/usr/lib64/python$PY" "$B/run" "$B/var" "$B/etc"
ln -s usr/sbin "$B/sbin"; ln -s usr/bin "$B/bin"; ln -s ../run "$B/var/run"
printf 'python' >"$B/usr/bin/python$PY"; ln -s "python$PY" "$B/usr/bin/python3"; echo '# os' >"$B/usr/lib64/python$PY/os.py"
printf 'stunnel' >"$B/usr/bin/stunnel"; printf 'mount.nfs' >"$B/usr/sbin/mount.nfs"; ln -s mount.nfs "$B/usr/sbin/mount.nfs4"
chmod 0755 "$B/usr/bin/python$PY" "$B/usr/bin/stunnel" "$B/usr/sbin/mount.nfs"
echo 'ID=rhel' >"$B/etc/os-release"
tar --sort=name --owner=0 --group=0 --mtime=@0 -C "$B" -cf "$W/base.tar" .
OPM=$(ls -1d "$ROOT"/_output/tools/opm-v*/opm | sort -V | tail -1)
O=$W/opm && rm -rf "$O" && mkdir -p "$O/bin" && cp "$OPM" "$O/bin/opm" && chmod 0755 "$O/bin/opm"
tar --sort=name --owner=0 --group=0 --mtime=@0 -C "$O" -cf "$W/opm.tar" .
platform_index() { # name tarball [entrypoint]: one image per platform, one index
  local name=$1 tarball=$2 manifests=()
  for arch in amd64 arm64; do
    crane append --oci-empty-base -f "$tarball" -t "$R/base/$name:tmp-$arch" >/dev/null
    crane mutate "$R/base/$name:tmp-$arch" --set-platform "linux/$arch" ${3:+--entrypoint "$3"} -t "$R/base/$name:$arch" >/dev/null
    manifests+=(-m "$R/base/$name:$arch")
  done
  crane index append "${manifests[@]}" -t "$R/base/$name:1" >/dev/null
}
platform_index rhel-like "$W/base.tar"
platform_index opm "$W/opm.tar" /bin/opm
rm -rf "$W/base-layout" && crane pull --format=oci "$R/base/rhel-like:1" "$W/base-layout"
# Stand-in sidecars, pinned by the digests the registry gives them.
: >"$W/bundle-images.txt"
for p in PROVISIONER_IMAGE:csi-external-provisioner NODE_DRIVER_REGISTRAR_IMAGE:csi-node-driver-registrar \
         LIVENESS_PROBE_IMAGE:csi-livenessprobe KUBE_RBAC_PROXY_IMAGE:kube-rbac-proxy TOOLS_IMAGE:tools; do
  crane mutate "$R/base/rhel-like:1" --label "name=${p#*:}" -t "$R/sidecars/${p#*:}:1" >/dev/null
  echo "${p%%:*}=$R/sidecars/${p#*:}@$(crane digest "$R/sidecars/${p#*:}:1")" >>"$W/bundle-images.txt"
done

# Stand-in botocore sdist (a setuptools project) on a local PEP 503 index, pinned by its sha256.
I=$W/index && rm -rf "$I" && mkdir -p "$I/simple/botocore"
/usr/bin/python3 - "$I" <<'PY'
import gzip, hashlib, io, os, sys, tarfile
root = sys.argv[1]
name, top = "botocore-1.34.140.tar.gz", "botocore-1.34.140"
files = {
    "setup.py": "from setuptools import setup\nsetup(name='botocore', version='1.34.140', packages=['botocore'],\n"
                "      package_data={'botocore': ['data/*.json']}, python_requires='>=3.9')\n",
    "PKG-INFO": "Metadata-Version: 2.1\nName: botocore\nVersion: 1.34.140\n",
    "botocore/__init__.py": "__version__ = '1.34.140'  # stand-in for tests\n",
    "botocore/data/endpoints.json": '{"partitions": []}\n',
}
raw = io.BytesIO()
with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as t:
    for n, c in sorted(files.items()):
        info = tarfile.TarInfo(top + "/" + n)
        info.size, info.mtime, info.mode = len(c), 315532800, 0o644
        t.addfile(info, io.BytesIO(c.encode()))
data = gzip.compress(raw.getvalue(), mtime=0)
open(os.path.join(root, name), "wb").write(data)
h = hashlib.sha256(data).hexdigest()
open(os.path.join(root, "simple/botocore/index.html"), "w").write('<a href="../../%s#sha256=%s">%s</a>\n' % (name, h, name))
open(os.path.join(root, "sha256"), "w").write(h + "\n")
PY
STANDIN_SHA256=$(cat "$I/sha256")
COMMITTED_SHA256=$(sed -n 's/^ *--hash=sha256:\([0-9a-f]\{64\}\).*/\1/p' "$ROOT/requirements.txt.ocp" | head -1)
grep -q "^botocore==1.34.140 " "$ROOT/requirements.txt.ocp" && [ -n "$COMMITTED_SHA256" ] ||
  { echo "requirements.txt.ocp no longer pins botocore==1.34.140 with one hash; update images/hack/standins.sh" >&2; exit 1; }
sed "s/$COMMITTED_SHA256/$STANDIN_SHA256/" "$ROOT/requirements.txt.ocp" >"$W/requirements.stand-in.txt"
(cd "$I" && exec /usr/bin/python3 -m http.server --bind "${IDX%:*}" "${IDX#*:}" >"$W/index.log" 2>&1) &
IDX_PID=$!
sleep 1

export AWS_EFS_UTILS_BASE_FROM="oci:$W/base-layout" AWS_EFS_CSI_DRIVER_OPERATOR_FROM="oci:$W/base-layout"
export REGISTRY="$R/openshift" WHEELS_INDEX_URL="http://$IDX/simple" WHEELS_REQUIREMENTS="$W/requirements.stand-in.txt"
export BUNDLE_IMAGES="$W/bundle-images.txt" CATALOG_BASE="$R/base/opm:1"
