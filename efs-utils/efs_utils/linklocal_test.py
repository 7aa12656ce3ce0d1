import http.server
import json
import threading

import pytest

from . import linklocal
from .imds import IMDS


class _Handler(http.server.BaseHTTPRequestHandler):
    seen = []

    def _answer(self):
        self.seen.append((self.command, self.path, self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"),
                          self.headers.get("Host")))
        if self.path.endswith("/missing"):
            self.send_error(404)
            return
        body = json.dumps({"path": self.path}).encode()
        self.send_response(200)
        if self.path.endswith("/chunked"):
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for piece in (body[:5], body[5:]):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\n\r\n")
            return
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_PUT = _answer

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    _Handler.protocol_version = "HTTP/1.1"
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield "http://127.0.0.1:%d" % srv.server_address[1]
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def no_proxy(monkeypatch):
    for k in list(__import__("os").environ):
        if k.lower().endswith("_proxy"):
            monkeypatch.delenv(k)


def test_get_put_and_chunked(server, no_proxy):
    assert json.loads(linklocal.request(server + "/latest/x")) == {"path": "/latest/x"}
    assert json.loads(linklocal.request(server + "/a/chunked")) == {"path": "/a/chunked"}
    linklocal.request(server + "/latest/api/token", method="PUT", headers={"X-aws-ec2-metadata-token-ttl-seconds": "5"})
    assert _Handler.seen[-1][:3] == ("PUT", "/latest/api/token", "5")
    assert _Handler.seen[-1][3] == server[len("http://"):]


def test_error_status_is_an_oserror(server, no_proxy):
    with pytest.raises(linklocal.HTTPStatusError) as e:
        linklocal.request(server + "/missing")
    assert e.value.status == 404 and isinstance(e.value, OSError)


def test_imds_through_it(server, no_proxy):
    imds = IMDS(server)
    assert json.loads(imds.get("/latest/meta-data/x")) == {"path": "/latest/meta-data/x"}
    assert imds._token  # the IMDSv2 token was fetched with a PUT


def test_with_a_proxy_urllib_and_its_rules_are_used(server, monkeypatch):
    """With http_proxy set the request goes to the proxy (as urllib, and efs-utils 1.36, send it)."""
    import urllib.request
    monkeypatch.setattr(urllib.request, "_opener", None)  # urlopen keeps the proxies of its first call
    _Handler.seen.clear()
    monkeypatch.setenv("http_proxy", server)
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    linklocal.request("http://169.254.170.2/v2/credentials/x", timeout=5)
    assert _Handler.seen[-1][1] == "http://169.254.170.2/v2/credentials/x"  # absolute URI: a proxy request
    monkeypatch.setenv("no_proxy", "169.254.170.2")
    urllib.request._opener = None
    with pytest.raises(OSError):  # no_proxy: urllib goes direct to the (unreachable) address
        linklocal.request("http://169.254.170.2/v2/credentials/x", timeout=0.2)


def test_url_forms():
    assert linklocal._split("http://169.254.169.254/latest/api/token") == ("169.254.169.254", 80, "/latest/api/token")
    assert linklocal._split("http://[fd00:ec2::254]/latest") == ("fd00:ec2::254", 80, "/latest")
    assert linklocal._split("http://127.0.0.1:8080") == ("127.0.0.1", 8080, "/")
