"""Choosing the local TLS port of a mount and holding it until the state file locks it."""

import random
import socket
from typing import Iterable, Optional, Tuple

from . import state
from .errors import FatalError


def _bind(port: int) -> Optional[socket.socket]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind(("127.0.0.1", port))
        return sock
    except OSError:
        sock.close()
        return None


def choose(state_dir: str, lower: int, upper: int, tlsport: Optional[int] = None,
           config_path: str = "") -> Tuple[int, socket.socket]:
    """choose returns a free port in [lower, upper) (or tlsport) with a socket bound to it.

    Ports named by any entry in the state dir are skipped. The caller writes the temporary state
    file, then closes the socket so stunnel can bind (aws/efs-utils#125).
    """
    if tlsport is not None:
        candidates = [tlsport]  # type: Iterable[int]
    else:
        # every port of the range once, from a random start (as random as 1.36's shuffle for the
        # port that is picked, without building and shuffling the whole range on every mount)
        start = random.randrange(upper - lower)
        candidates = (lower + (start + i) % (upper - lower) for i in range(upper - lower))
    used = state.ports_in_use(state_dir)
    for port in candidates:
        if port in used:
            continue
        sock = _bind(port)
        if sock is not None:
            # tlsport=0: the kernel picks the port, as for 1.36's bind(("localhost", 0))
            return sock.getsockname()[1], sock
    if tlsport is not None:
        raise FatalError("Specified port [%d] is unavailable. Try selecting a different port." % tlsport)
    raise FatalError("Failed to locate an available port in the range [%d, %d], try specifying a different "
                     "port range in %s" % (lower, upper, config_path))
