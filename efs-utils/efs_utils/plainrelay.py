"""A plain TCP relay for a non-TLS mount that efs-utils 2.x/3.x routed through its local efs-proxy.

efs-utils 2.x and 3.x mount without TLS through efs-proxy too (`mount -t nfs4 127.0.0.1:/ -o port=<local port>`),
so such a mount needs something listening on its local port after efs-proxy is gone. stunnel cannot relay plain
TCP to plain TCP; this script can. Standard library only, Python 3.9; run as a script, not imported by the rest of
the package. Its process name (comm) is `efs-relay`, so the watchdog knows it as a relay.
"""

import argparse
import ctypes
import os
import signal
import socket
import sys
import threading
from typing import Tuple

COMM = "efs-relay"
PR_SET_NAME = 15


def _hostport(text: str) -> Tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise argparse.ArgumentTypeError("%r: want host:port" % text)
    return host.strip("[]"), int(port)


def _set_comm(name: str) -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_NAME, name.encode()[:15], 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while True:
            data = src.recv(1 << 16)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def _serve_one(client: socket.socket, target: Tuple[str, int]) -> None:
    try:
        upstream = socket.create_connection(target, timeout=30)
    except OSError:
        client.close()
        return
    upstream.settimeout(None)
    for s in (client, upstream):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=COMM, description="Relays plain TCP from a local port to a mount target.")
    parser.add_argument("--accept", type=_hostport, required=True, help="local host:port to listen on")
    parser.add_argument("--connect", type=_hostport, required=True, help="mount target host:port")
    parser.add_argument("--pid-file", help="file to write this process's pid into")
    args = parser.parse_args(argv)
    _set_comm(COMM)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # the watchdog SIGHUPs relays after a certificate renewal
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(args.accept)
    except OSError as e:
        sys.stderr.write("%s: cannot listen on %s:%d: %s\n" % (COMM, args.accept[0], args.accept[1], e))
        return 1
    listener.listen(64)
    if args.pid_file:
        os.makedirs(os.path.dirname(args.pid_file), exist_ok=True)
        with open(args.pid_file, "w") as f:
            f.write("%d\n" % os.getpid())
    while True:
        client, _ = listener.accept()
        threading.Thread(target=_serve_one, args=(client, args.connect), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
