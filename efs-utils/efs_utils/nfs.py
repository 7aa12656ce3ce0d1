"""Running mount.nfs4 with the efs-utils 1.36 retries, and the readahead tuning after it."""

import logging
import os
import random
import signal
import subprocess
import sys
import time
from typing import List, Mapping, Optional, Sequence

from . import paths
from .errors import FatalError
from .logs import FILE_ONLY

RETRYABLE = "reset by peer"

log = logging.getLogger(__name__)


def command(mount_nfs4: str, source: str, mountpoint: str, options: str,
            netns: Optional[str] = None) -> List[str]:
    prefix = ["nsenter", "--net=" + netns] if netns else []
    return prefix + [mount_nfs4, source, mountpoint, "-o", options]


def _run(cmd: Sequence[str], timeout: Optional[float],
         env: Optional[Mapping[str, str]] = None) -> "tuple[int, bytes]":
    # own process group: a timed-out attempt is killed with everything it started
    proc = subprocess.Popen(list(cmd), executable=paths.executable(cmd[0]), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, close_fds=True, start_new_session=True, env=env)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            proc.kill()
        proc.communicate()
        raise
    return proc.returncode, (err or b"").strip()


def failure(label: str, mountpoint: str, rc: int, err: bytes) -> FatalError:
    """failure is 1.36's report of a failed mount.nfs4 (mount_nfs): its stderr, printed as Python 3 prints the
    bytes (b'...'), which is the text users and the driver's events know, and its return code as the exit code;
    the log gets 'Failed to mount <dns name> at <mount point>: returncode=N, stderr="b'...'"'."""
    text = str(err)
    return FatalError(text, rc, log_message='Failed to mount %s at %s: returncode=%d, stderr="%s"'
                      % (label, mountpoint, rc, text))


def mount(cmd: Sequence[str], retry: bool = True, count: int = 3, timeout: int = 15, sleep=time.sleep,
          label: str = "", env: Optional[Mapping[str, str]] = None) -> None:
    """mount runs cmd as 1.36's call_nfs_mount_command_with_retry_succeed and mount_nfs do: with retry, up
    to count-1 attempts under timeout, retried when stderr says "reset by peer" (after 1.5^i + rand()
    seconds) or the attempt timed out (at once); the last attempt has no timeout. Each retry is announced
    on stderr. A failure raises FatalError with mount.nfs4's exit code. label is the DNS name 1.36 logs."""
    attempts = max(count, 1) if retry else 1
    mountpoint = cmd[-3]
    for i in range(attempts - 1):
        try:
            rc, err = _run(cmd, timeout, env)
        except subprocess.TimeoutExpired:
            reason, wait = "timeout after %s sec" % timeout, 0.0
        else:
            if rc == 0:
                return
            if RETRYABLE not in str(err):
                raise failure(label, mountpoint, rc, err)
            reason, wait = str(err), 1.5 ** i + random.random()
        log.error("Mounting %s to %s failed due to %s, mount attempt %d/%d", label, mountpoint, reason, i + 1,
                  attempts, extra=FILE_ONLY)
        sys.stderr.write("Mount attempt %d/%d failed due to %s, wait %d sec before next attempt.\n"
                         % (i + 1, attempts, reason, wait))
        sleep(wait)
    rc, err = _run(cmd, None, env)
    if rc != 0:
        raise failure(label, mountpoint, rc, err)


def kernel_at_least(release: str, major: int, minor: int) -> bool:
    try:
        parts = release.split(".")
        return (int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or 0)) >= (major, minor)
    except (IndexError, ValueError):
        return False


def readahead_kb(options: str) -> int:
    """readahead_kb is 15 * rsize / 1024 (rsize defaults to 1 MiB)."""
    rsize = 1048576
    for item in options.split(","):
        k, _, v = item.partition("=")
        if k == "rsize" and v.isdigit():
            rsize = int(v)
    return 15 * rsize // 1024


def optimize_readahead(mountpoint: str, options: str, bdi_root: str = "/sys/class/bdi",
                       release: Optional[str] = None) -> bool:
    """optimize_readahead writes read_ahead_kb of the mount's backing device (kernel >= 5.4).
    A failure only warns."""
    if not kernel_at_least(release or os.uname().release, 5, 4):
        return False
    try:
        dev = os.stat(mountpoint).st_dev
        path = os.path.join(bdi_root, "%d:%d" % (os.major(dev), os.minor(dev)), "read_ahead_kb")
        with open(path, "w") as f:
            f.write(str(readahead_kb(options)))
        return True
    except OSError as e:
        log.warning("failed to set the readahead window of %s: %s", mountpoint, e)
        return False
