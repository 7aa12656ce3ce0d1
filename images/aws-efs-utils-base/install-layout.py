#!/usr/bin/env python3
"""Install efs-utils into a root file system as efs-utils/layout.json says.

Usage: install-layout.py <efs-utils source dir> <root>

The Containerfile runs this at build time; `go tool mage images` reads the same layout.json, and a Go test runs
this script and compares both results (paths, types, modes). Directories that do not exist are created with mode
0755; symlinks already in the root (RHEL's /sbin -> usr/sbin) are followed, as a package manager would.
"""
import fnmatch
import json
import os
import shutil
import sys


def install_file(src, dest, mode):
    os.makedirs(os.path.dirname(dest), mode=0o755, exist_ok=True)
    shutil.copyfile(src, dest)
    os.chmod(dest, mode)


def excluded(name, patterns):
    return name.startswith(".") or any(fnmatch.fnmatchcase(name, p) for p in patterns)


def install_tree(src, dest, mode, patterns):
    os.makedirs(dest, mode=0o755, exist_ok=True)
    os.chmod(dest, 0o755)
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = sorted(d for d in dirnames if not excluded(d, patterns))
        rel = os.path.relpath(dirpath, src)
        target = os.path.normpath(os.path.join(dest, rel))
        os.makedirs(target, mode=0o755, exist_ok=True)
        os.chmod(target, 0o755)
        for name in sorted(filenames):
            if not excluded(name, patterns):
                install_file(os.path.join(dirpath, name), os.path.join(target, name), mode)


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: install-layout.py <efs-utils source dir> <root>\n")
        return 2
    src, root = argv[1], argv[2]
    os.umask(0o022)
    with open(os.path.join(src, "layout.json")) as f:
        layout = json.load(f)
    place = lambda p: os.path.join(root, p.lstrip("/"))  # noqa: E731
    for f in layout.get("files", []):
        install_file(os.path.join(src, f["src"]), place(f["dest"]), int(f["mode"], 8))
    for t in layout.get("trees", []):
        install_tree(os.path.join(src, t["src"]), place(t["dest"]), int(t["mode"], 8), t.get("exclude", []))
    for d in layout.get("dirs", []):
        os.makedirs(place(d["dest"]), mode=0o755, exist_ok=True)
        os.chmod(place(d["dest"]), int(d["mode"], 8))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
