"""HTTP requests to the node's metadata endpoints: instance metadata (IMDS) and container credentials.

urllib.request, with http.client and the email package behind it, is a tenth of the CPU of a whole `iam`
mount. These endpoints are plain HTTP on the node's own link, answer with a small body and need none of its
machinery, so without a proxy we speak HTTP/1.1 over a socket here (Connection: close; Content-Length,
chunked or read-to-close bodies). When any *_proxy variable is set we use urllib.request as before, so that
proxy and no_proxy rules stay exactly urllib's (and efs-utils 1.36's).
"""

import os
import socket
from typing import Dict, Mapping, Optional, Tuple

MAX_BODY = 1 << 20


class HTTPStatusError(OSError):
    """An answer with a status of 400 or more (urllib raises HTTPError, also an OSError)."""

    def __init__(self, url: str, status: int):
        super().__init__("HTTP Error %d for %s" % (status, url))
        self.status = status


def proxy_configured(env: Optional[Mapping[str, str]] = None) -> bool:
    """proxy_configured reports whether any *_proxy variable is set, as urllib would read it."""
    env = os.environ if env is None else env
    return any(k.lower().endswith("_proxy") and v for k, v in env.items())


def _split(url: str) -> Tuple[str, int, str]:
    if not url.startswith("http://"):
        raise ValueError("not a plain http URL: %s" % url)
    hostport, slash, path = url[len("http://"):].partition("/")
    if hostport.startswith("["):  # IPv6 literal, e.g. http://[fd00:ec2::254]
        end = hostport.index("]")
        host, rest = hostport[1:end], hostport[end + 1:]
        port = int(rest[1:]) if rest.startswith(":") else 80
    elif ":" in hostport:
        host, _, p = hostport.rpartition(":")
        port = int(p)
    else:
        host, port = hostport, 80
    return host, port, slash + path if slash else "/"


def _dechunk(body: bytes) -> bytes:
    out, i = [], 0
    while True:
        line_end = body.index(b"\r\n", i)
        size = int(body[i:line_end].split(b";")[0], 16)
        if size == 0:
            return b"".join(out)
        start = line_end + 2
        out.append(body[start:start + size])
        i = start + size + 2


def _request(method: str, url: str, headers: Dict[str, str], timeout: float) -> bytes:
    host, port, path = _split(url)
    name = "[%s]" % host if ":" in host else host
    lines = ["%s %s HTTP/1.1" % (method, path), "Host: %s" % (name if port == 80 else "%s:%d" % (name, port)),
             "Connection: close", "Accept: */*"]
    lines += ["%s: %s" % kv for kv in headers.items()]
    if method != "GET":
        lines.append("Content-Length: 0")
    data = b""
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        while len(data) <= MAX_BODY:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    head, sep, body = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    parts = status_line.split(" ", 2)
    if not sep or len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise OSError("malformed HTTP answer from %s" % url)
    fields = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    if fields.get("transfer-encoding", "").lower() == "chunked":
        body = _dechunk(body)
    elif fields.get("content-length", "").isdigit():
        body = body[:int(fields["content-length"])]
    if int(parts[1]) >= 400:
        raise HTTPStatusError(url, int(parts[1]))
    return body


def request(url: str, method: str = "GET", headers: Optional[Dict[str, str]] = None, timeout: float = 1.0) -> bytes:
    """request returns the body of a successful answer; it raises OSError (HTTPStatusError for 4xx/5xx)."""
    if proxy_configured() or not url.startswith("http://"):
        import urllib.request
        req = urllib.request.Request(url, method=method, headers=headers or {})
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.read()
    try:
        return _request(method, url, headers or {}, timeout)
    except ValueError as e:  # malformed chunk sizes or ports
        raise OSError("malformed HTTP answer from %s: %s" % (url, e)) from None
