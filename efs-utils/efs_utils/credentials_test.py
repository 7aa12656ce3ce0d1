import http.server
import json
import threading

import pytest

from . import credentials
from .errors import FatalError
from .imds import IMDS


def test_profile_files(tmp_path):
    aws = tmp_path / ".aws"
    aws.mkdir()
    (aws / "credentials").write_text("[default]\naws_access_key_id = AK1\naws_secret_access_key = S1\n"
                                     "[p2]\naws_access_key_id = AK2\naws_secret_access_key = S2\naws_session_token = T2\n")
    (aws / "config").write_text("[profile p3]\naws_access_key_id = AK3\naws_secret_access_key = S3\n")
    home = str(tmp_path)
    assert credentials.default_profile(home) == "default"
    creds, src = credentials.profile_files("p2", home)
    assert (creds.access_key, creds.secret_key, creds.token, src) == ("AK2", "S2", "T2", "credentials:p2")
    creds, src = credentials.profile_files("p3", home)
    assert (creds.access_key, src) == ("AK3", "config:p3")
    assert credentials.profile_files("nope", home) == (None, "")


def test_explicit_profile_wins_over_environment(tmp_path):
    aws = tmp_path / ".aws"
    aws.mkdir()
    (aws / "credentials").write_text("[p]\naws_access_key_id = AKP\naws_secret_access_key = SP\n")
    creds, src = credentials.get("us-east-1", IMDS("http://127.0.0.1:9"), "http://127.0.0.1:9",
                                 {"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/x"}, awsprofile="p", home=str(tmp_path))
    assert creds.access_key == "AKP" and src == "credentials:p"


def test_aws_profile_environment_reads_the_sdk_config_file(tmp_path, monkeypatch):
    """AWS_PROFILE names the profile when the mount has none; botocore reads it from AWS_CONFIG_FILE (the file the
    operator gives the controller), before ECS, web identity and IMDS."""
    config = tmp_path / "credentials"
    config.write_text("[default]\naws_access_key_id = AKCCO\naws_secret_access_key = SCCO\n")
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    env = {"AWS_PROFILE": "default", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/x"}
    home = tmp_path / "home"
    home.mkdir()
    creds, src = credentials.get("us-east-1", IMDS("http://127.0.0.1:9"), "http://127.0.0.1:9", env, home=str(home))
    assert (creds.access_key, creds.secret_key, src) == ("AKCCO", "SCCO", "named_profile:default")
    again = credentials.refetch(src, "us-east-1", IMDS("http://127.0.0.1:9"), "http://127.0.0.1:9", env, home=str(home))
    assert again.access_key == "AKCCO"
    # the mount's awsprofile option still wins
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text("[p]\naws_access_key_id = AKP\naws_secret_access_key = SP\n")
    creds, src = credentials.get("us-east-1", IMDS("http://127.0.0.1:9"), "http://127.0.0.1:9", env, awsprofile="p",
                                 home=str(home))
    assert (creds.access_key, src) == ("AKP", "credentials:p")


@pytest.mark.parametrize("body", [
    json.dumps({"AssumeRoleWithWebIdentityResponse": {"AssumeRoleWithWebIdentityResult": {"Credentials": {
        "AccessKeyId": "ASIA1", "SecretAccessKey": "S", "SessionToken": "T"}}}}),
    '<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">'
    "<AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>ASIA1</AccessKeyId>"
    "<SecretAccessKey>S</SecretAccessKey><SessionToken>T</SessionToken></Credentials>"
    "</AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>",
])
def test_parse_sts_response(body):
    c = credentials.parse_sts_response(body)
    assert (c.access_key, c.secret_key, c.token) == ("ASIA1", "S", "T")


def test_bad_sts_response():
    with pytest.raises(FatalError, match="Unexpected AssumeRoleWithWebIdentity response"):
        credentials.parse_sts_response("{}")


def test_nothing_found_names_the_file(tmp_path):
    with pytest.raises(FatalError, match="are not found in AWS credentials file"):
        credentials.get("us-east-1", IMDS("http://127.0.0.1:9", token_timeout=0.2, timeout=0.2),
                        "http://127.0.0.1:9", {}, home=str(tmp_path))


class _IMDSv1(http.server.BaseHTTPRequestHandler):
    """IMDS with tokens switched off (PUT refused), serving the instance role."""

    def do_PUT(self):
        self.send_error(403)

    def do_GET(self):
        routes = {"/latest/meta-data/iam/security-credentials/": "node-role",
                  "/latest/meta-data/iam/security-credentials/node-role":
                      json.dumps({"AccessKeyId": "ASIAIMDS", "SecretAccessKey": "S", "Token": "T"}),
                  "/latest/dynamic/instance-identity/document":
                      json.dumps({"region": "ap-south-1", "availabilityZone": "ap-south-1b"})}
        if self.path not in routes:
            self.send_error(404)
            return
        body = routes[self.path].encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


def test_imds_v1_fallback_and_instance_role():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _IMDSv1)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        imds = IMDS("http://127.0.0.1:%d" % srv.server_address[1])
        assert imds.region() == "ap-south-1" and imds.availability_zone() == "ap-south-1b"
        creds, src = credentials.get("ap-south-1", imds, "http://127.0.0.1:9", {}, home="/nonexistent")
        assert creds.access_key == "ASIAIMDS" and src == "metadata:"
        assert credentials.refetch("metadata:", "ap-south-1", imds, "", {}).access_key == "ASIAIMDS"
    finally:
        srv.shutdown()
