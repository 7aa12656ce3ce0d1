"""The hot path starts no program besides stunnel and mount.nfs4 (efs-utils 1.36 starts about five
openssl processes, `stunnel -help` and `stat` per TLS mount). Counted with Python audit hooks."""

import json
import os
import subprocess
import sys

from .conftest import EFS_UTILS, FS_ID, RECORDER, STUNNEL

COUNTER = os.path.join(EFS_UTILS, "tools", "count_subprocesses.py")


def _run(node, mountpoint, options, out):
    proc = subprocess.run([sys.executable, COUNTER, out, FS_ID, mountpoint, "-o", options], env=node.env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    with open(out) as f:
        return [argv[0] for argv in json.load(f)], proc


def test_tls_mount_starts_only_stunnel_and_mount_nfs4(node, mount_target, tmp_path):
    opts = "tls,mounttargetip=" + mount_target.ip
    cold, _ = _run(node, node.mountpoint("cold"), opts, str(tmp_path / "cold.json"))
    assert cold == [STUNNEL, STUNNEL, RECORDER]  # stunnel -help once per stunnel binary, then cached
    warm, _ = _run(node, node.mountpoint("warm"), opts, str(tmp_path / "warm.json"))
    assert warm == [STUNNEL, RECORDER]
    node.mounted += [node.mountpoint("cold"), node.mountpoint("warm")]


def test_non_tls_mount_starts_only_mount_nfs4(node, mount_target, tmp_path):
    node.env["RECORDER_PROBE"] = ""
    started, _ = _run(node, node.mountpoint(), "mounttargetip=" + mount_target.ip, str(tmp_path / "n.json"))
    assert started == [RECORDER]
    node.mounted.append(node.mountpoint())
