#!/usr/bin/env python3
"""Measure mount.efs's own overhead per warm TLS mount: from exec of mount.efs to exec of mount.nfs4.

Real stunnel relays against a stunnel TLS server with a test CA (as in the e2e tests); mount.nfs4 is a
bash script that records $EPOCHREALTIME and exits 0. Needs root and stunnel4. Run from the repo root:

    /usr/bin/python3 efs-utils/tools/bench_tls_mount.py --mounts 40

It also times, on the same machine, the subprocesses efs-utils 1.36 adds to every TLS mount
(`stunnel -help`, openssl req, openssl ca -selfsign, `stat -f`) for comparison.
"""
import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from efs_utils import conftest  # noqa: E402  (test helpers: CA, mount target stand-in, scratch node)
from cryptography.hazmat.primitives import serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import rsa  # noqa: E402


def percentile(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100.0 * (len(s) - 1))))]


FLOORS = [
    ("interpreter start (python3 -c pass)", "pass"),
    ("interpreter + imports of the TLS path", "import sys; sys.path.insert(0, %r); import efs_utils.cli, efs_utils.tls"
     % os.path.dirname(HERE)),
]


def bench_mounts(node, target, n, python, old_cmds):
    stamp = os.path.join(node.dir, "exec-time")
    recorder = os.path.join(node.dir, "mount.nfs4")
    with open(recorder, "w") as f:
        f.write("#!/bin/bash\necho $EPOCHREALTIME > %s\n" % stamp)
    os.chmod(recorder, 0o755)
    node.env["EFS_UTILS_MOUNT_NFS4"] = recorder
    mp = node.mountpoint()
    samples, old, floors = [], [], {}
    for i in range(n + 1):
        t0 = time.time()
        proc = subprocess.run([python, conftest.MOUNT_EFS, conftest.FS_ID, mp, "-o", "tls,mounttargetip=" + target.ip],
                              env=node.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if proc.returncode != 0:
            raise SystemExit("mount %d failed: %s" % (i, proc.stderr.decode()))
        with open(stamp) as f:
            t1 = float(f.read().strip())
        if i > 0:  # the first mount is cold: it probes stunnel -help once per binary
            samples.append((t1 - t0) * 1000)
            old.append(run_136_subprocesses(old_cmds))  # interleaved, so both see the same machine load
            for key, code in FLOORS:
                t = time.time()
                subprocess.run([python, "-c", code], env=node.env)
                floors.setdefault(key, []).append((time.time() - t) * 1000)
        for name, st in node.states().items():
            try:
                os.killpg(st["pid"], signal.SIGTERM)
            except OSError:
                pass
        subprocess.run(["rm", "-rf"] + [os.path.join(node.state_dir, e) for e in os.listdir(node.state_dir)
                                        if e.startswith(("fs-", "stunnel-config", "~"))])
    return samples, old, floors


def setup_136_subprocesses(directory):
    key = os.path.join(directory, "k.pem")
    k = rsa.generate_private_key(public_exponent=65537, key_size=3072)
    with open(key, "wb") as f:
        f.write(k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()))
    csr, crt = os.path.join(directory, "r.csr"), os.path.join(directory, "c.pem")
    cmds = [
        [conftest.STUNNEL, "-help"],
        ["openssl", "req", "-new", "-key", key, "-subj", "/CN=node", "-out", csr],
        ["openssl", "x509", "-req", "-in", csr, "-signkey", key, "-days", "1", "-sha256", "-out", crt],
        ["stat", "-f", "-L", "-c", "%T", directory],
    ]
    return cmds


def run_136_subprocesses(cmds):
    t0 = time.time()
    for c in cmds:
        subprocess.run(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return (time.time() - t0) * 1000


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mounts", type=int, default=40)
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args()
    if os.geteuid() != 0 or not conftest.STUNNEL:
        raise SystemExit("needs root and stunnel4")
    with tempfile.TemporaryDirectory() as d:
        ca = conftest.TestCA(d)
        target = conftest.MountTarget(os.path.join(d, "target"), ca, [conftest.DNS_NAME])
        key = os.path.join(d, "key.pem")
        k = rsa.generate_private_key(public_exponent=65537, key_size=3072)
        with open(key, "wb") as f:
            f.write(k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()))
        node = conftest.Node(os.path.join(d, "node"), ca.path, key)
        try:
            ours, old, floors = bench_mounts(node, target, args.mounts, args.python, setup_136_subprocesses(d))
        finally:
            node.close()
            target.close()
    p50, p90 = statistics.median(ours), percentile(ours, 90)
    print("mount.efs exec -> mount.nfs4 exec, warm TLS mount, %d mounts (%s):" % (len(ours), args.python))
    print("  p50 %.1f ms  p90 %.1f ms  min %.1f ms  max %.1f ms" % (p50, p90, min(ours), max(ours)))
    for key, _ in FLOORS:
        print("  of which %s: p50 %.1f ms" % (key, statistics.median(floors[key])))
    print("subprocesses efs-utils 1.36 adds per TLS mount (stunnel -help, openssl req, openssl x509 -req, stat -f):")
    print("  p50 %.1f ms (these alone, before any of 1.36's own work)" % statistics.median(old))
    ratios = [o / m for o, m in zip(old, ours)]
    print("ratio (1.36 extra subprocesses alone) / (our whole overhead), median of interleaved pairs: %.2f"
          % statistics.median(ratios))


if __name__ == "__main__":
    main()
