"""Entering a network namespace (the netns option) for the port check; Python 3.9 has no os.setns."""

import ctypes
import ctypes.util
import os
from contextlib import contextmanager
from typing import Iterator, Optional

CLONE_NEWNET = 0x40000000


def _setns(fd: int) -> None:
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


@contextmanager
def entered(path: Optional[str]) -> Iterator[None]:
    """entered runs the block inside the network namespace at path (no-op for None) and returns
    the calling thread to its own namespace afterwards."""
    if not path:
        yield
        return
    own = os.open("/proc/self/task/%d/ns/net" % _gettid(), os.O_RDONLY)
    target = os.open(path, os.O_RDONLY)
    try:
        _setns(target)
        try:
            yield
        finally:
            _setns(own)
    finally:
        os.close(target)
        os.close(own)


def _gettid() -> int:
    return getattr(os, "gettid", lambda: os.getpid())()
