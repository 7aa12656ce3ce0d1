#!/usr/bin/env python3
"""Run bin/mount.efs in this interpreter and record every program it starts (Python audit hooks).

Usage: count_subprocesses.py OUT.json mount.efs-args...
Writes a JSON list of argv lists to OUT.json when mount.efs exits.
"""
import json
import os
import runpy
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MOUNT_EFS = os.path.join(os.path.dirname(HERE), "bin", "mount.efs")


def main():
    out, args = sys.argv[1], sys.argv[2:]
    started = []

    def hook(event, payload):
        if event == "subprocess.Popen":
            started.append([str(a) for a in payload[1]])
        elif event in ("os.exec", "os.posix_spawn", "os.spawn", "os.system"):
            started.append([event] + [str(a) for a in payload[:2]])

    sys.addaudithook(hook)
    sys.argv = [MOUNT_EFS] + args
    code = 0
    try:
        runpy.run_path(MOUNT_EFS, run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    with open(out, "w") as f:
        json.dump(started, f)
    sys.exit(code)


if __name__ == "__main__":
    main()
