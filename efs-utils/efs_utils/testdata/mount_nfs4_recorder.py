#!/usr/bin/python3
"""Test stand-in for /sbin/mount.nfs4 (this kernel has no NFS client).

Called as mount.nfs4 SOURCE DIR -o OPTIONS. It records the call as a JSON line in $RECORDER_LOG,
checks that the TLS relay carries data when $RECORDER_PROBE=1 (sends a line to 127.0.0.1:<port>
and expects the mount target stand-in to echo it), bind-mounts $RECORDER_EXPORT on DIR, and appends
the line the kernel would show in /proc/mounts to $EFS_UTILS_PROC_MOUNTS.
"""
import json
import os
import socket
import subprocess
import sys
import time


def main():
    start = time.time()
    argv = sys.argv
    source, target = argv[1], argv[2]
    options = argv[argv.index("-o") + 1] if "-o" in argv else ""
    opts = dict((o.split("=", 1) + [None])[:2] for o in options.split(",") if o)
    record = {"argv": argv, "source": source, "mountpoint": target, "options": options, "time": start,
              "path": os.environ.get("PATH")}
    log = os.environ.get("RECORDER_LOG")
    if log:
        with open(log, "a") as f:
            f.write(json.dumps(record) + "\n")
    fail = os.environ.get("RECORDER_FAIL")
    if fail:
        sys.stderr.write(os.environ.get("RECORDER_FAIL_MESSAGE", "mount.nfs4: access denied by server") + "\n")
        return int(fail)
    if os.environ.get("RECORDER_PROBE") == "1":
        host = "127.0.0.1" if source.startswith("127.0.0.1:") else source.rsplit(":", 1)[0]
        port = int(opts.get("port") or 2049)
        try:
            with socket.create_connection((host, port), timeout=5) as s:
                s.settimeout(5)
                s.sendall(b"probe\n")
                got = s.recv(64)
            if got != b"probe\n":
                raise OSError("relay answered %r" % got)
        except OSError as e:
            sys.stderr.write("mount.nfs4: Connection reset by peer (%s)\n" % e)
            return 32
    export = os.environ.get("RECORDER_EXPORT")
    if export:
        subprocess.run(["mount", "--bind", export, target], check=True)
    table = os.environ.get("EFS_UTILS_PROC_MOUNTS")
    if table:
        with open(table, "a") as f:
            f.write("%s %s nfs4 %s 0 0\n" % (source, os.path.realpath(target), options))
    return 0


if __name__ == "__main__":
    sys.exit(main())
