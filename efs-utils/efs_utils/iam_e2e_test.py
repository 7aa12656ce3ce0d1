"""The iam option end to end: credentials from a container credentials endpoint (awscredsuri) go into
the SigV4 extension of the mount's certificate, and the watchdog re-fetches them to renew it."""

import http.server
import json
import os
import signal
import threading
import time

from cryptography import x509

from . import certificate, sigv4
from .conftest import FS_ID, in_kernel_mount_table, wait_for

CREDS = {"AccessKeyId": "ASIAEXAMPLEKEY", "SecretAccessKey": "ecs/secret", "Token": "ecs-session-token"}


class _Creds(http.server.BaseHTTPRequestHandler):
    hits = []

    def do_GET(self):
        self.hits.append(self.path)
        if self.path != "/v2/credentials/abc":
            self.send_error(404)
            return
        body = json.dumps(CREDS).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def _server():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Creds)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def test_iam_mount_and_certificate_renewal(node, mount_target):
    srv = _server()
    try:
        node.env["EFS_UTILS_ECS_CREDENTIALS_ENDPOINT"] = "http://127.0.0.1:%d" % srv.server_address[1]
        mp = node.mountpoint()
        proc = node.mount(FS_ID, mp, "tls,iam,awscredsuri=/v2/credentials/abc,mounttargetip=" + mount_target.ip)
        assert proc.returncode == 0, proc.stderr.decode()
        [(name, st)] = node.states().items()
        assert st["awsCredentialsMethod"] == "ecs:/v2/credentials/abc"
        cert = x509.load_pem_x509_certificate(open(st["certificate"], "rb").read())
        auth = cert.extensions.get_extension_for_oid(x509.ObjectIdentifier(certificate.OID_CLIENT_AUTH)).value.value
        assert b"ASIAEXAMPLEKEY" in auth and b"ecs-session-token" in auth
        key = certificate.private_key(node.private_key, os.path.join(node.state_dir, "efs-utils-lock"))
        created = certificate.parse_creation_time(st["certificateCreationTime"])
        sig = sigv4.signature(certificate.public_key_hash(key), CREDS["AccessKeyId"], CREDS["SecretAccessKey"],
                              created, "us-east-1", FS_ID, CREDS["Token"])
        assert sig.encode() in auth
        assert os.path.exists(os.path.join(node.state_dir, st["mountStateDir"], "publicKey.pem"))

        # an expired certificate: the watchdog re-fetches credentials, rewrites it and SIGHUPs stunnel
        old_serial = cert.serial_number
        st["certificateCreationTime"] = "200101000000Z"
        with open(os.path.join(node.state_dir, name), "w") as f:
            json.dump(st, f)
        hits_before = len(_Creds.hits)
        node.write_config({("mount-watchdog", "stunnel_health_check_enabled"): "false"})
        wd = node.watchdog()
        try:
            renewed = wait_for(lambda: node.states()[name]["certificateCreationTime"] != "200101000000Z", timeout=10)
        finally:
            wd.send_signal(signal.SIGTERM)
            wd.wait(10)
        assert renewed
        new = x509.load_pem_x509_certificate(open(st["certificate"], "rb").read())
        assert new.serial_number != old_serial
        assert len(_Creds.hits) > hits_before
        assert node.states()[name]["pid"] == st["pid"]  # same relay, reloaded with SIGHUP, not restarted
        assert in_kernel_mount_table(mp)
    finally:
        srv.shutdown()
