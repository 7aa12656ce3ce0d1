#!/usr/bin/env python3
"""Compare mount.efs's own cost per warm TLS mount with another commit's: exec of mount.efs to exec of mount.nfs4.

Both trees are installed as the aws-efs-utils-base image has them: bin/mount.efs beside the efs_utils package
(tests excluded, as layout.json says), byte-compiled with compileall --invalidation-mode unchecked-hash, on a
read-only file system, with /usr (the interpreter and its library) read-only too. The run happens in a private
mount namespace (unshare), so nothing outside it sees those mounts. Mounts of the two trees alternate, in
turns, for each option set, so both see the same machine load. Real stunnel relays against a stunnel TLS
server with a test CA (as in the e2e tests); `iam` credentials come from a local container credentials
endpoint; mount.nfs4 is a bash script that records $EPOCHREALTIME. Needs root, stunnel4, util-linux and git.
From the repository root:

    /usr/bin/python3 efs-utils/tools/bench_tls_mount.py --baseline 2f2d439 --mounts 40
"""
import argparse
import http.server
import json
import os
import random
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EFS_UTILS = os.path.dirname(HERE)
REPO = os.path.dirname(EFS_UTILS)
sys.path.insert(0, EFS_UTILS)

from efs_utils import conftest  # noqa: E402  (test helpers: CA, mount target stand-in, scratch node)
from cryptography.hazmat.primitives import serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import rsa  # noqa: E402

IN_NAMESPACE = "EFS_UTILS_BENCH_NAMESPACE"
CREDS = {"AccessKeyId": "ASIABENCH", "SecretAccessKey": "bench/secret", "Token": "bench-token"}
CREDS_URI = "/v2/credentials/bench"


def percentile(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100.0 * (len(s) - 1))))]


def install(src_efs_utils, root, python, compile_modules=True):
    """install lays out bin/mount.efs and efs_utils/ under root as the image does and byte-compiles them."""
    with open(os.path.join(src_efs_utils, "layout.json")) as f:
        layout = json.load(f)
    [tree] = [t for t in layout["trees"] if t["src"] == "efs_utils"]
    os.makedirs(os.path.join(root, "bin"))
    shutil.copy(os.path.join(src_efs_utils, "bin", "mount.efs"), os.path.join(root, "bin", "mount.efs"))
    shutil.copytree(os.path.join(src_efs_utils, "efs_utils"), os.path.join(root, "efs_utils"),
                    ignore=shutil.ignore_patterns(*tree["exclude"]))
    if not compile_modules:
        return
    subprocess.run([python, "-m", "compileall", "-q", "--invalidation-mode", "unchecked-hash",
                    os.path.join(root, "efs_utils")], check=True)


def read_only(path):
    subprocess.run(["mount", "--bind", path, path], check=True)
    subprocess.run(["mount", "-o", "remount,bind,ro", path], check=True)


def baseline_tree(ref, directory):
    """baseline_tree extracts efs-utils/ of commit ref with git archive."""
    os.makedirs(directory)
    archive = subprocess.run(["git", "-C", REPO, "archive", ref, "efs-utils"], stdout=subprocess.PIPE, check=True)
    subprocess.run(["tar", "-x", "-C", directory], input=archive.stdout, check=True)
    return os.path.join(directory, "efs-utils")


class _Creds(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps(CREDS).encode()
        self.send_response(200 if self.path == CREDS_URI else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def _cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def one_mount(node, python, root, options, stamp, mp, cpu=None):
    """one_mount returns the ms from exec of mount.efs to exec of mount.nfs4; cpu gets the CPU ms of mount.efs
    and the programs it waited for."""
    c0 = _cpu()
    t0 = time.time()
    proc = subprocess.run([python, os.path.join(root, "bin", "mount.efs"), conftest.FS_ID, mp, "-o", options],
                          env=node.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if cpu is not None:
        cpu.append((_cpu() - c0) * 1000)
    if proc.returncode != 0:
        raise SystemExit("mount.efs of %s failed (%s): %s" % (root, options, proc.stderr.decode()))
    with open(stamp) as f:
        t1 = float(f.read().strip())
    for st in node.states().values():
        try:
            os.killpg(st["pid"], signal.SIGTERM)
        except OSError:
            pass
    for e in os.listdir(node.state_dir):
        if e.startswith(("fs-", "stunnel-config", "~")):
            p = os.path.join(node.state_dir, e)
            shutil.rmtree(p, ignore_errors=True) if os.path.isdir(p) else os.unlink(p)
    return (t1 - t0) * 1000


def run(args):
    python = os.path.realpath(args.python)
    with tempfile.TemporaryDirectory() as d:
        roots = {"ours": os.path.join(d, "ours"), "baseline": os.path.join(d, "baseline")}
        install(EFS_UTILS, roots["ours"], python)
        install(baseline_tree(args.baseline, os.path.join(d, "src")), roots["baseline"], python)
        for root in roots.values():
            read_only(root)
        read_only("/usr")
        ca = conftest.TestCA(d)
        target = conftest.MountTarget(os.path.join(d, "target"), ca, [conftest.DNS_NAME])
        key = os.path.join(d, "key.pem")
        k = rsa.generate_private_key(public_exponent=65537, key_size=3072)
        with open(key, "wb") as f:
            f.write(k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()))
        node = conftest.Node(os.path.join(d, "node"), ca.path, key)
        node.env.pop("PYTHONDONTWRITEBYTECODE", None)  # the image does not set it; its files are read-only
        creds = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Creds)
        threading.Thread(target=creds.serve_forever, daemon=True).start()
        node.env["EFS_UTILS_ECS_CREDENTIALS_ENDPOINT"] = "http://127.0.0.1:%d" % creds.server_address[1]
        stamp = os.path.join(node.dir, "exec-time")
        recorder = os.path.join(node.dir, "mount.nfs4")
        with open(recorder, "w") as f:
            f.write("#!/bin/bash\necho $EPOCHREALTIME > %s\n" % stamp)
        os.chmod(recorder, 0o755)
        node.env["EFS_UTILS_MOUNT_NFS4"] = recorder
        mp = node.mountpoint()
        option_sets = {"tls": "tls", "tls,iam": "tls,iam,awscredsuri=" + CREDS_URI}
        times = {(v, o): [] for v in roots for o in option_sets}
        cpu = {(v, o): [] for v in roots for o in option_sets}
        try:
            for name in roots:  # warm: the first mount probes stunnel -help once per binary
                one_mount(node, python, roots[name], "tls,mounttargetip=" + target.ip, stamp, mp)
            for i in range(args.mounts):
                for label, opts in option_sets.items():
                    order = list(roots)
                    random.shuffle(order)
                    for name in order:
                        times[(name, label)].append(one_mount(node, python, roots[name],
                                                              opts + ",mounttargetip=" + target.ip, stamp, mp,
                                                              cpu[(name, label)]))
        finally:
            creds.shutdown()
            node.close()
            target.close()
            for root in roots.values():
                subprocess.run(["umount", root], check=True)
    print("mount.efs exec -> mount.nfs4 exec, warm TLS mount, %d mounts per tree and option set, interleaved" % args.mounts)
    print("python %s; trees byte-compiled (unchecked-hash) on read-only mounts, /usr read-only" % python)
    for label in option_sets:
        ours, base = times[("ours", label)], times[("baseline", label)]
        print("  %-8s ours p50 %6.1f ms (p90 %6.1f)   baseline %s p50 %6.1f ms (p90 %6.1f)   ratio of p50s %.2f" % (
            label, statistics.median(ours), percentile(ours, 90), args.baseline, statistics.median(base),
            percentile(base, 90), statistics.median(ours) / statistics.median(base)))
        co, cb = statistics.median(cpu[("ours", label)]), statistics.median(cpu[("baseline", label)])
        print("  %-8s CPU of mount.efs and the programs it waits for: ours p50 %.1f ms, baseline p50 %.1f ms, "
              "ratio %.2f" % ("", co, cb, co / cb))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mounts", type=int, default=40)
    ap.add_argument("--baseline", default="HEAD", help="git commit to compare with (default HEAD)")
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args()
    if os.geteuid() != 0 or not conftest.STUNNEL or not shutil.which("unshare"):
        raise SystemExit("needs root, stunnel4 and unshare (util-linux)")
    if os.environ.get(IN_NAMESPACE) != "1":
        env = dict(os.environ, **{IN_NAMESPACE: "1"})
        os.execvpe("unshare", ["unshare", "--mount", "--propagation", "private", sys.executable] + sys.argv, env)
    run(args)


if __name__ == "__main__":
    main()
