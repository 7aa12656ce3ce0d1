import os
import shutil

import pytest

from . import stunnel
from .errors import FatalError


def _cfg(tmp_path, **kw):
    ca = tmp_path / "ca.pem"
    ca.write_text("x")
    base = dict(mount_name="fs-abc.mnt.20100", state_dir="/var/run/efs", port=20100,
                connect_host="fs-abc.efs.us-east-1.amazonaws.com", check_host="fs-abc.efs.us-east-1.amazonaws.com",
                verify=2, cafile=str(ca), cert="/var/run/efs/fs-abc.mnt.20100+/certificate.pem",
                key="/etc/amazon/efs/privateKey.pem", ocsp=False, fips=False)
    base.update(kw)
    return stunnel.RelayConfig(**base)


FULL = stunnel.Capabilities(foreground_quiet=True, check_host=True, ocsp_aia=True, libwrap=True)


def test_render_matches_136_layout(tmp_path):
    text = stunnel.render(_cfg(tmp_path), FULL)
    assert text == (
        "fips = no\nforeground = quiet\nsocket = l:SO_REUSEADDR=yes\nsocket = a:SO_BINDTODEVICE=lo\n"
        "pid = /var/run/efs/fs-abc.mnt.20100+/stunnel.pid\n\n[efs]\nclient = yes\naccept = 127.0.0.1:20100\n"
        "connect = fs-abc.efs.us-east-1.amazonaws.com:2049\nsslVersion = TLSv1.2\nrenegotiation = no\n"
        "TIMEOUTbusy = 20\nTIMEOUTclose = 0\nTIMEOUTidle = 70\ndelay = yes\nverify = 2\nCAfile = %s\n"
        "cert = /var/run/efs/fs-abc.mnt.20100+/certificate.pem\nkey = /etc/amazon/efs/privateKey.pem\n"
        "checkHost = fs-abc.efs.us-east-1.amazonaws.com\nlibwrap = no\n" % (tmp_path / "ca.pem"))


def test_render_variants(tmp_path):
    old = stunnel.Capabilities(check_host=True)
    text = stunnel.render(_cfg(tmp_path, fips=True, ocsp=True, verify=0, connect_host="10.0.0.9"),
                          stunnel.Capabilities(check_host=True, ocsp_aia=True))
    assert "fips = yes" in text and "foreground = yes" in text and "OCSPaia = yes" in text
    assert "CAfile" not in text and "libwrap" not in text and "connect = 10.0.0.9:2049" in text
    text = stunnel.render(_cfg(tmp_path, debug=True, log_file="/var/log/amazon/efs/x.stunnel.log"), old)
    assert "debug = debug" in text and "output = /var/log/amazon/efs/x.stunnel.log" in text


@pytest.mark.parametrize("kw,caps,message", [
    (dict(cafile="/nonexistent.pem"), FULL, "Failed to find certificate authority file"),
    ({}, stunnel.Capabilities(), "does not support checkHost"),
    (dict(ocsp=True), stunnel.Capabilities(check_host=True), "does not support OCSPaia"),
])
def test_render_errors(tmp_path, kw, caps, message):
    with pytest.raises(FatalError, match=message):
        stunnel.render(_cfg(tmp_path, **kw), caps)


def test_parse_real_help_and_cache(tmp_path):
    binary = shutil.which("stunnel4") or shutil.which("stunnel")
    if not binary:
        pytest.skip("needs stunnel4 (apt-get install stunnel4); go tool mage test installs it")
    caps = stunnel.capabilities(binary, str(tmp_path))
    assert caps.check_host and caps.ocsp_aia and caps.foreground_quiet
    assert os.path.exists(tmp_path / stunnel.CAPABILITIES_FILE)


def test_capabilities_are_cached_per_binary(tmp_path):
    counter = tmp_path / "runs"
    fake = tmp_path / "stunnel"
    fake.write_text("#!/bin/sh\necho x >> %s\necho 'checkHost              = peer certificate host name pattern' >&2\n"
                    "echo 'foreground             = yes|quiet|no foreground mode' >&2\n" % counter)
    fake.chmod(0o755)
    first = stunnel.capabilities(str(fake), str(tmp_path))
    second = stunnel.capabilities(str(fake), str(tmp_path))
    assert first == second == stunnel.Capabilities(foreground_quiet=True, check_host=True)
    assert counter.read_text().count("x") == 1
    os.utime(fake, ns=(1, 1))  # a new binary (other mtime) is probed again
    stunnel.capabilities(str(fake), str(tmp_path))
    assert counter.read_text().count("x") == 2


def test_process_checks():
    assert not stunnel.is_running(None) and not stunnel.is_running(-1)
    assert not stunnel.is_running(os.getpid())  # running, but not stunnel
    assert stunnel.process_info(os.getpid())["state"] in "RS"
    assert stunnel.command("/usr/bin/stunnel", "/c", "/proc/1/ns/net") == \
        ["nsenter", "--net=/proc/1/ns/net", "/usr/bin/stunnel", "/c"]
