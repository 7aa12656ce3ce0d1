"""Running mount.nfs4 with the efs-utils 1.36 retries, and the readahead tuning after it."""

import logging
import os
import random
import signal
import subprocess
import time
from typing import List, Optional, Sequence

from .errors import FatalError

RETRYABLE = "reset by peer"

log = logging.getLogger(__name__)


def command(mount_nfs4: str, source: str, mountpoint: str, options: str,
            netns: Optional[str] = None) -> List[str]:
    prefix = ["nsenter", "--net=" + netns] if netns else []
    return prefix + [mount_nfs4, source, mountpoint, "-o", options]


def _run(cmd: Sequence[str], timeout: Optional[float]) -> "tuple[int, str]":
    # own process group: a timed-out attempt is killed with everything it started
    proc = subprocess.Popen(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE, close_fds=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            proc.kill()
        proc.communicate()
        raise
    text = (err or b"").decode("utf-8", "replace").strip() or (out or b"").decode("utf-8", "replace").strip()
    return proc.returncode, text


def mount(cmd: Sequence[str], retry: bool = True, count: int = 3, timeout: int = 15,
          sleep=time.sleep) -> None:
    """mount runs cmd; with retry, up to count-1 attempts under timeout are retried when the output
    says "reset by peer" or the attempt times out (backoff 1.5^i + rand()); the last attempt has
    no timeout. A failure raises FatalError with mount.nfs4's exit code."""
    attempts = max(count, 1) if retry else 1
    for i in range(attempts - 1):
        try:
            rc, text = _run(cmd, timeout)
        except subprocess.TimeoutExpired:
            log.warning("mount.nfs4 attempt %d timed out after %ds; retrying", i + 1, timeout)
            sleep(1.5 ** i + random.random())
            continue
        if rc == 0:
            return
        if RETRYABLE not in text:
            raise FatalError("Failed to mount %s at %s: returncode=%d, stderr=\"%s\"" % (cmd[-4], cmd[-3], rc, text), rc)
        log.warning("mount.nfs4 attempt %d: %s; retrying", i + 1, text)
        sleep(1.5 ** i + random.random())
    rc, text = _run(cmd, None)
    if rc != 0:
        raise FatalError("Failed to mount %s at %s: returncode=%d, stderr=\"%s\"" % (cmd[-4], cmd[-3], rc, text), rc)


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
