import pytest

from . import config, resolve
from .conftest import DIST_CONF
from .errors import FatalError
from .imds import IMDS

NO_IMDS = IMDS("http://127.0.0.1:9")


def _cfg(extra="", fmt=None):
    with open(DIST_CONF) as f:
        text = f.read()
    if fmt:
        text = text.replace("dns_name_format = {az}.{fs_id}.efs.{region}.{dns_name_suffix}", "dns_name_format = " + fmt)
    return config.parse(text.replace("#region = us-east-1", extra), "t.conf", {})


@pytest.mark.parametrize("region,az,want", [
    ("us-east-1", None, "fs-abc.efs.us-east-1.amazonaws.com"),
    ("us-east-1", "us-east-1a", "us-east-1a.fs-abc.efs.us-east-1.amazonaws.com"),
    ("cn-north-1", None, "fs-abc.efs.cn-north-1.amazonaws.com.cn"),
    ("us-iso-east-1", "us-iso-east-1b", "us-iso-east-1b.fs-abc.efs.us-iso-east-1.c2s.ic.gov"),
])
def test_dns_name(region, az, want):
    assert resolve.dns_name(_cfg(), "fs-abc", region, az) == want


@pytest.mark.parametrize("fmt", ["{fs_id}.efs.{bogus}.com", "efs.{region}.amazonaws.com"])
def test_bad_dns_name_format(fmt):
    with pytest.raises(FatalError, match="incorrect number of replacement fields"):
        resolve.dns_name(_cfg(fmt=fmt), "fs-abc", "us-east-1")


def test_region_order():
    assert resolve.region(_cfg("region = eu-west-1"), NO_IMDS) == "eu-west-1"
    assert resolve.region(_cfg(fmt="{fs_id}.efs.ap-south-1.amazonaws.com"), NO_IMDS) == "ap-south-1"
    with pytest.raises(FatalError, match="Error retrieving region"):
        resolve.region(_cfg(), NO_IMDS)


@pytest.mark.parametrize("name,want", [
    ("us-east-1a.fs-abc.efs.us-east-1.amazonaws.com", "fs-abc.efs.us-east-1.amazonaws.com"),
    ("use1-az1.fs-abc.efs.us-east-1.amazonaws.com", "fs-abc.efs.us-east-1.amazonaws.com"),
    ("fs-abc.efs.us-east-1.amazonaws.com", "fs-abc.efs.us-east-1.amazonaws.com"),
])
def test_check_host_name(name, want):
    assert resolve.check_host_name(name, "fs-abc") == want


def test_crossaccount_name():
    assert resolve.crossaccount_dns_name("fs-abc", "us-west-2", "usw2-az1") == "usw2-az1.fs-abc.efs.us-west-2.amazonaws.com"


def test_unresolvable_without_fallback_says_what_to_do():
    cfg = _cfg("region = us-east-1")
    cfg._p.set("mount", "fall_back_to_mount_target_ip_address_enabled", "false")
    with pytest.raises(FatalError) as e:
        resolve.resolve(cfg, {}, "fs-0badbadbadbad0000", "us-east-1", NO_IMDS)
    assert e.value.message.startswith('Failed to resolve "fs-0badbadbadbad0000.efs.us-east-1.amazonaws.com". The '
                                      "file system mount target ip address cannot be found")
    assert "not enabled in config file t.conf" in e.value.message


def test_crossaccount_refuses_fallback(monkeypatch):
    monkeypatch.setattr(NO_IMDS, "availability_zone_id", lambda: "use1-az9")
    called = []
    with pytest.raises(FatalError, match="not supported with the \"crossaccount\" option"):
        resolve.resolve(_cfg(), {"crossaccount": None}, "fs-0badbadbadbad0000", "us-east-1", NO_IMDS,
                        fallback=lambda n: called.append(n) or "10.0.0.1")
    assert called == []


def test_fallback_ip_keeps_dns_name():
    t = resolve.resolve(_cfg(), {"az": "us-east-1a"}, "fs-0badbadbadbad0000", "us-east-1", NO_IMDS,
                        fallback=lambda n: "10.1.2.3")
    assert t.dns_name == "us-east-1a.fs-0badbadbadbad0000.efs.us-east-1.amazonaws.com"
    assert t.ip == "10.1.2.3" and t.host == "10.1.2.3"


def test_mounttargetip_unreachable():
    # 127.0.0.1:2049 refused at once (nothing listens there in tests that use random 127.x addresses)
    import socket
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", 2049))
    except OSError:
        pytest.skip("something listens on 127.0.0.1:2049 on this machine")
    finally:
        s.close()
    with pytest.raises(FatalError, match="Connection to the mount target IP address 127.0.0.1 timeout"):
        resolve.resolve(_cfg(), {"mounttargetip": "127.0.0.1"}, "fs-abc", "us-east-1", NO_IMDS)


def test_spec_that_is_not_an_efs_name_is_refused():
    from .cli import _fs_id_from_cname
    with pytest.raises(FatalError, match='The specified domain name "localhost" did not resolve to an EFS mount target'):
        _fs_id_from_cname(_cfg(), "localhost")
    with pytest.raises(FatalError, match='Failed to resolve "no-such-host.invalid"'):
        _fs_id_from_cname(_cfg(), "no-such-host.invalid")
