"""State files in /var/run/efs, named and laid out as efs-utils 1.36 writes them.

One JSON file per TLS mount, `fs-<id>.<dotted mount point>.<port>`, first written as
`~<name>` (it doubles as the port lock) and renamed when the mount finishes; the per-mount
directory `<name>+/` holds the certificate and stunnel.pid.
"""

import json
import os
from typing import Any, Dict, Iterator, Optional, Tuple

TEMP_PREFIX = "~"
MOUNT_DIR_SUFFIX = "+"
STUNNEL_CONFIG_PREFIX = "stunnel-config."


def mount_name(fs_id: str, mountpoint: str, port: int) -> str:
    """mount_name is fs-id.<absolute mount point with / replaced by . and no leading dot>.<port>."""
    dotted = os.path.abspath(mountpoint).replace(os.sep, ".").lstrip(".")
    return "%s.%s.%d" % (fs_id, dotted, port)


def mount_key(mountpoint: str, port: int) -> str:
    """mount_key is how the watchdog matches a state file to a mount: <dotted mount point>.<port>."""
    return "%s.%d" % (os.path.abspath(mountpoint).replace(os.sep, ".").lstrip("."), port)


def key_of_state_file(name: str) -> str:
    """key_of_state_file drops the file system ID: the name after its first dot."""
    return name.split(".", 1)[1] if "." in name else name


def ensure_dir(path: str, mode: int) -> None:
    os.makedirs(path, mode=mode, exist_ok=True)


def write(state_dir: str, name: str, state: Dict[str, Any]) -> str:
    """write replaces <state_dir>/<name> with state (via a temporary file and a rename)."""
    path = os.path.join(state_dir, name)
    tmp = os.path.join(state_dir, ".%s.tmp" % name)
    with open(tmp, "w") as f:
        json.dump(state, f)
    os.replace(tmp, path)
    return path


def read(path: str) -> Optional[Dict[str, Any]]:
    """read returns the parsed state, or None when the file is gone or not JSON."""
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def finish(state_dir: str, name: str) -> None:
    """finish renames ~<name> to <name> (done also when the mount failed, as 1.36 does)."""
    src = os.path.join(state_dir, TEMP_PREFIX + name)
    if os.path.exists(src):
        os.replace(src, os.path.join(state_dir, name))


def state_files(state_dir: str) -> Iterator[Tuple[str, str]]:
    """state_files yields (name, path) of finished state files: non-directories starting with fs-."""
    try:
        names = sorted(os.listdir(state_dir))
    except FileNotFoundError:
        return
    for name in names:
        path = os.path.join(state_dir, name)
        if name.startswith("fs-") and not os.path.isdir(path):
            yield name, path


def ports_in_use(state_dir: str) -> "set[int]":
    """ports_in_use are the ports of every entry (including ~ files) ending with .<port>."""
    used = set()
    try:
        names = os.listdir(state_dir)
    except FileNotFoundError:
        return used
    for name in names:
        tail = name.rsplit(".", 1)[-1]
        if tail.isdigit():
            used.add(int(tail))
    return used
