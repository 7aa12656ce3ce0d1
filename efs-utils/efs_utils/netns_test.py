import os
import socket
import subprocess
import time

import pytest

from . import netns


def test_no_namespace_is_a_no_op():
    with netns.entered(None):
        pass


def test_bind_happens_inside_the_namespace():
    """A port busy in our namespace is free inside another one (the netns option's port check)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to create a network namespace; CI runs as root")
    holder = subprocess.Popen(["unshare", "--net", "sleep", "30"])
    try:
        path = "/proc/%d/ns/net" % holder.pid
        deadline = time.time() + 5
        while os.readlink(path) == os.readlink("/proc/self/ns/net") and time.time() < deadline:
            time.sleep(0.02)
        busy = socket.socket()
        busy.bind(("127.0.0.1", 0))
        port = busy.getsockname()[1]
        try:
            with netns.entered(path):
                s = socket.socket()  # created inside: belongs to the other namespace
                s.bind(("127.0.0.1", port))
                s.close()
            again = socket.socket()
            with pytest.raises(OSError):
                again.bind(("127.0.0.1", port))  # back home the port is still busy
            again.close()
        finally:
            busy.close()
    finally:
        holder.kill()
        holder.wait()
