"""The image ships efs_utils byte-compiled (compileall --invalidation-mode unchecked-hash) on a read-only file
system: a mount must load every module of ours from its .pyc and compile none from source (which would cost
the whole import time again on every mount, since nothing can be written back). Checked with the "compile"
audit event, which CPython raises for every compile() of source, including imports from .py files."""

import importlib.util
import json
import os
import subprocess
import sys

from .conftest import EFS_UTILS, FS_ID
from .iam_e2e_test import _server

WRAPPER = """
import json, runpy, sys
out, script = sys.argv[1], sys.argv[2]
compiled = []
def hook(event, args):
    if event == "compile" and isinstance(args[1], str):
        compiled.append(args[1])
sys.addaudithook(hook)
sys.argv = [script] + sys.argv[3:]
code = 0
try:
    runpy.run_path(script, run_name="__main__")
except SystemExit as e:
    code = e.code if isinstance(e.code, int) else 1
with open(out, "w") as f:
    json.dump(compiled, f)
sys.exit(code)
"""


def _install(root, compile_it):
    spec = importlib.util.spec_from_file_location("bench", os.path.join(EFS_UTILS, "tools", "bench_tls_mount.py"))
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    if compile_it:
        bench.install(EFS_UTILS, root, sys.executable)
    else:  # the same files without .pyc: the control that shows the check sees source compiles
        bench.install(EFS_UTILS, root, sys.executable, compile_modules=False)


def _compiled_during_mount(node, mount_target, root, out, mountpoint):
    env = dict(node.env)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if not os.path.exists(os.path.join(root, "efs_utils", "__pycache__")):
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # the control writes nothing either, like a read-only image
    script = os.path.join(root, "bin", "mount.efs")
    proc = subprocess.run([sys.executable, "-c", WRAPPER, out, script, FS_ID, mountpoint, "-o",
                           "tls,iam,awscredsuri=/v2/credentials/abc,mounttargetip=" + mount_target.ip], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    node.mounted.append(mountpoint)
    with open(out) as f:
        return [p for p in json.load(f) if p.startswith(root + os.sep) and not p.startswith(os.path.join(root, "bin"))]


def _root(tmp_path, name, compile_it):
    root = str(tmp_path / name)
    _install(root, compile_it)
    return root


def test_tls_iam_mount_compiles_nothing_of_ours_from_source(node, mount_target, tmp_path):
    srv = _server()  # a container credentials endpoint, so that the iam path runs to the end
    try:
        node.env["EFS_UTILS_ECS_CREDENTIALS_ENDPOINT"] = "http://127.0.0.1:%d" % srv.server_address[1]
        compiled = _compiled_during_mount(node, mount_target, _root(tmp_path, "image", True),
                                          str(tmp_path / "image.json"), node.mountpoint("image"))
        control = _compiled_during_mount(node, mount_target, _root(tmp_path, "source", False),
                                         str(tmp_path / "source.json"), node.mountpoint("source"))
    finally:
        srv.shutdown()
    assert compiled == []
    assert any(p.endswith(os.path.join("efs_utils", "libcrypto.py")) for p in control), control
