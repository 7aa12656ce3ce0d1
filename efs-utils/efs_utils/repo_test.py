"""Checks over the efs-utils tree: Python 3.9 syntax, the install layout, requirements.txt.ocp."""

import ast
import glob
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from .conftest import EFS_UTILS, REPO


def _sources():
    files = sorted(glob.glob(os.path.join(EFS_UTILS, "efs_utils", "**", "*.py"), recursive=True))
    files += [os.path.join(EFS_UTILS, "bin", n) for n in ("mount.efs", "amazon-efs-mount-watchdog")]
    return files


@pytest.mark.parametrize("path", _sources(), ids=lambda p: os.path.relpath(p, EFS_UTILS))
def test_python39_syntax(path):
    with open(path) as f:
        src = f.read()
    tree = ast.parse(src, filename=path, feature_version=(3, 9))
    for node in ast.walk(tree):
        # X | Y in annotations parses under 3.9 grammar but fails at runtime there
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            anns = [a.annotation for a in node.args.args + node.args.kwonlyargs if a.annotation] + \
                   ([node.returns] if node.returns else [])
            for ann in anns:
                assert not any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.BitOr) for n in ast.walk(ann)), \
                    "%s:%d: X | Y annotation needs Python 3.10" % (path, node.lineno)
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "zip":
            assert not any(k.arg == "strict" for k in node.keywords), "%s: zip(strict=) needs 3.10" % path


def _python39():
    cands = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.9*/bin/python3.9"))) + [shutil.which("python3.9")]
    for cand in cands:
        if cand and os.path.exists(cand) and "/shims/" not in cand:
            return cand
    return None


def test_compiles_and_imports_under_a_real_python39(tmp_path):
    py = _python39()
    if not py:
        pytest.skip("no Python 3.9 interpreter (RHEL 9's version) on this machine: `pyenv install 3.9` or put python3.9 on "
                    "PATH; the ast check above still runs")
    files = _sources()
    subprocess.run([py, "-c", "import sys\nfor f in sys.argv[1:]: compile(open(f).read(), f, 'exec')"]
                   + files, check=True)
    # modules that need only the standard library import under 3.9
    mods = ["options", "nfsopts", "config", "paths", "state", "mounttable", "sigv4", "der", "resolve", "imds", "nfs"]
    subprocess.run([py, "-c", "import sys; sys.path.insert(0, %r)\nfor m in %r: __import__('efs_utils.' + m)"
                    % (EFS_UTILS, mods)], check=True)


def test_module_sizes():
    for path in _sources():
        with open(path) as f:
            n = sum(1 for _ in f)
        if not path.endswith("_test.py") and not path.endswith("conftest.py"):
            assert n <= 500, "%s has %d lines; split it" % (path, n)


def test_layout_sources_exist():
    with open(os.path.join(EFS_UTILS, "layout.json")) as f:
        layout = json.load(f)
    for entry in layout["files"] + layout["trees"]:
        assert os.path.exists(os.path.join(EFS_UTILS, entry["src"])), entry["src"]
    dests = {e["src"]: e["dest"] for e in layout["files"]}
    assert dests["bin/mount.efs"] == "/sbin/mount.efs"
    assert dests["bin/amazon-efs-mount-watchdog"] == "/usr/bin/amazon-efs-mount-watchdog"
    for script in ("mount.efs", "amazon-efs-mount-watchdog"):
        path = os.path.join(EFS_UTILS, "bin", script)
        assert os.access(path, os.X_OK)
        with open(path) as f:
            src = f.read()
        assert src.startswith("#!/usr/bin/env python3\n") and "/usr/lib/aws-efs-utils" in src


def test_entry_scripts_find_the_installed_package(tmp_path):
    """Installed like the image does it (script in /sbin-like dir, package under a lib dir), the
    script must import the package from /usr/lib/aws-efs-utils; here we point it at a copy."""
    lib = tmp_path / "usr" / "lib" / "aws-efs-utils"
    shutil.copytree(os.path.join(EFS_UTILS, "efs_utils"), str(lib / "efs_utils"),
                    ignore=shutil.ignore_patterns("*_test.py", "conftest.py", "testdata", "__pycache__"))
    sbin = tmp_path / "sbin"
    sbin.mkdir()
    with open(os.path.join(EFS_UTILS, "bin", "mount.efs")) as f:
        src = f.read().replace("/usr/lib/aws-efs-utils", str(lib))
    (sbin / "mount.efs").write_text(src)
    out = subprocess.run([sys.executable, str(sbin / "mount.efs"), "--version"], stdout=subprocess.PIPE, check=True)
    # 1.36 parse_arguments_early_exit: argv[0] as invoked
    assert out.stdout == b"%s Version: 1.36.0\n" % str(sbin / "mount.efs").encode()


REQ_LINE = re.compile(r"^(?P<name>[A-Za-z0-9_.-]+)==(?P<version>[0-9][^ ]*)(?P<rest>.*)$")


def parse_requirements(text):
    """parse_requirements joins continuation lines and returns the active requirement lines."""
    joined = re.sub(r"\s*\\\n\s*", " ", text)
    return [l.strip() for l in joined.splitlines() if l.strip() and not l.strip().startswith("#")]


def check_requirement(line):
    m = REQ_LINE.match(line)
    if not m:
        return "requirement %r: want name==version --hash=sha256:<64 hex>" % line
    hashes = re.findall(r"--hash=sha256:([0-9a-f]+)", m.group("rest"))
    if not hashes or any(len(h) != 64 for h in hashes):
        return "requirement %r: want at least one --hash=sha256:<64 hex digits>" % line
    return None


@pytest.mark.parametrize("line,ok", [
    ("botocore==1.34.140 --hash=sha256:" + "a" * 64, True),
    ("botocore>=1.34", False), ("botocore==1.34.140", False), ("botocore==1.34.140 --hash=sha256:abc", False),
    ("botocore --hash=sha256:" + "a" * 64, False),
])
def test_requirement_checker(line, ok):
    assert (check_requirement(line) is None) is ok


def test_requirements_txt_ocp_is_fully_pinned():
    with open(os.path.join(REPO, "requirements.txt.ocp")) as f:
        text = f.read()
    active = parse_requirements(text)
    assert active, "requirements.txt.ocp has no active requirement"
    errors = [e for e in map(check_requirement, active) if e]
    assert not errors, errors
    assert active == ["botocore==1.34.140 --hash=sha256:86302b2226c743b9eec7915a4c6cfaffd338ae03989cd9ee181078ef39d1ab39"]
    for rpm in ("python3-jmespath", "python3-dateutil", "python3-urllib3", "python3-six", "python3-cryptography"):
        assert "RPM " + rpm in text
