"""Reading the kernel mount table (/proc/mounts) without a subprocess."""

import os
import re
from typing import Dict, List, NamedTuple, Optional

from . import state

_ESCAPE = re.compile(r"\\([0-7]{3})")


class Mount(NamedTuple):
    """Mount is one /proc/mounts line."""

    source: str
    mountpoint: str
    fstype: str
    options: str

    def option(self, key: str) -> Optional[str]:
        for item in self.options.split(","):
            k, _, v = item.partition("=")
            if k == key:
                return v
        return None


def _unescape(field: str) -> str:
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), field)


def parse(text: str) -> List[Mount]:
    """parse reads /proc/mounts text; octal escapes (\\040 for a space) are decoded."""
    mounts = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 4:
            continue
        mounts.append(Mount(_unescape(fields[0]), _unescape(fields[1]), fields[2], fields[3]))
    return mounts


def read(path: str) -> List[Mount]:
    try:
        with open(path) as f:
            return parse(f.read())
    except FileNotFoundError:
        return []


def is_nfs_mounted(mounts: List[Mount], mountpoint: str) -> bool:
    """is_nfs_mounted reports whether an NFS file system is mounted at mountpoint."""
    target = os.path.realpath(mountpoint)
    return any(m.mountpoint == target and m.fstype.startswith("nfs") for m in mounts)


def tls_mounts(mounts: List[Mount]) -> Dict[str, Mount]:
    """tls_mounts maps <dotted mount point>.<port> to the NFS mounts served through a local relay."""
    out = {}
    for m in mounts:
        if m.source.startswith("127.0.0.1") and "nfs" in m.fstype:
            port = m.option("port") or "2049"
            try:
                out[state.mount_key(m.mountpoint, int(port))] = m
            except ValueError:
                continue
    return out
