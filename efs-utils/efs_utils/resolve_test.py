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
    # 1.36 get_fallback_mount_target_ip_address, then throw_dns_resolve_failure_with_fallback_message
    assert e.value.message == (
        'Failed to resolve "fs-0badbadbadbad0000.efs.us-east-1.amazonaws.com" - check that your file system ID is '
        "correct, and ensure that the VPC has an EFS mount target for this file system ID.\nSee "
        "https://docs.aws.amazon.com/console/efs/mount-dns-name for more detail.\nAttempting to lookup mount target "
        "ip address using botocore. Fallback to mount target ip address feature is not enabled in config file t.conf.")


def test_crossaccount_refuses_fallback(monkeypatch):
    monkeypatch.setattr(NO_IMDS, "availability_zone_id", lambda: "use1-az9")
    called = []
    with pytest.raises(FatalError) as e:
        resolve.resolve(_cfg(), {"crossaccount": None}, "fs-0badbadbadbad0000", "us-east-1", NO_IMDS,
                        fallback=lambda n: called.append(n) or "10.0.0.1")
    assert called == []
    assert e.value.message.endswith("Attempting to lookup mount target ip address using botocore. Fallback to mount "
                                    "target ip address feature is not available when the crossaccount option is used.")


def test_crossaccount_without_az_id():
    with pytest.raises(FatalError) as e:
        resolve.resolve(_cfg(), {"crossaccount": None}, "fs-abc", "us-east-1", NO_IMDS)
    # 1.36 get_dns_name_and_fallback_mount_target_ip_address
    assert e.value.message == ("Cannot retrieve AZ-ID from metadata service. This is required for the crossaccount "
                               "mount option.")


def test_mounttargetip_with_crossaccount(monkeypatch):
    monkeypatch.setattr(NO_IMDS, "availability_zone_id", lambda: "use1-az9")
    with pytest.raises(FatalError) as e:
        resolve.resolve(_cfg(), {"crossaccount": None, "mounttargetip": "10.0.0.1"}, "fs-abc", "us-east-1", NO_IMDS)
    # 1.36 get_dns_name_and_fallback_mount_target_ip_address (after the crossaccount name, as there)
    assert e.value.message == "mounttargetip option is incompatible with crossaccount option."


def test_fallback_failure_and_unreachable_fallback_ip():
    def no_target(name):
        raise FatalError("No matching mount target in the az us-east-1a.")
    with pytest.raises(FatalError) as e:
        resolve.resolve(_cfg(), {"az": "us-east-1a"}, "fs-0badbadbadbad0000", "us-east-1", NO_IMDS, fallback=no_target)
    # 1.36 get_fallback_mount_target_ip_address -> throw_ip_address_connect_failure_with_fallback_message
    assert e.value.message == (
        'Failed to resolve "us-east-1a.fs-0badbadbadbad0000.efs.us-east-1.amazonaws.com". The file system mount target '
        "ip address cannot be found, please pass mount target ip address via mount options. \nNo matching mount "
        "target in the az us-east-1a.")
    ip = _refusing_ip()
    with pytest.raises(FatalError) as e:
        resolve.resolve(_cfg(), {}, "fs-0badbadbadbad0000", "us-east-1", NO_IMDS, fallback=lambda n: ip)
    assert e.value.message == (
        'Failed to resolve "fs-0badbadbadbad0000.efs.us-east-1.amazonaws.com". Cannot connect to file system mount '
        "target ip address %s. \nUnknown error when connecting to mount target IP address %s, [Errno 111] Connection "
        "refused." % (ip, ip))


def test_fallback_ip_keeps_dns_name():
    t = resolve.resolve(_cfg(), {"az": "us-east-1a"}, "fs-0badbadbadbad0000", "us-east-1", NO_IMDS,
                        fallback=lambda n: "10.1.2.3")
    assert t.dns_name == "us-east-1a.fs-0badbadbadbad0000.efs.us-east-1.amazonaws.com"
    assert t.ip == "10.1.2.3" and t.host == "10.1.2.3"


def _refusing_ip():
    """A loopback address where nothing listens on 2049: a connection is refused at once."""
    from .conftest import free_loopback_ip
    return free_loopback_ip()


def test_mounttargetip_refused():
    ip = _refusing_ip()
    with pytest.raises(FatalError) as e:
        resolve.resolve(_cfg(), {"mounttargetip": ip}, "fs-abc", "us-east-1", NO_IMDS)
    # 1.36 mount_target_ip_address_can_be_resolved(passed_via_options=True), then
    # throw_ip_address_connect_failure_with_fallback_message: a refused connection is an "Unknown error"
    assert e.value.message == (
        "Cannot connect to file system mount target ip address %s. \nUnknown error when connecting to mount target "
        "IP address %s, [Errno 111] Connection refused. Please check if the mount target ip address passed via mount "
        "option is correct." % (ip, ip))


def test_mounttargetip_timeout(monkeypatch):
    import socket

    def timeout(*args, **kwargs):
        raise socket.timeout("timed out")
    monkeypatch.setattr(socket, "create_connection", timeout)
    monkeypatch.setattr(resolve.time, "sleep", lambda s: None)
    with pytest.raises(FatalError) as e:
        resolve.resolve(_cfg(), {"mounttargetip": "10.9.9.9"}, "fs-abc", "us-east-1", NO_IMDS)
    assert e.value.message == (
        "Cannot connect to file system mount target ip address 10.9.9.9. \nConnection to the mount target IP address "
        "10.9.9.9 timeout. Please retry in 5 minutes if the mount target is newly created. Otherwise check your VPC "
        "and security group configuration to ensure your file system is reachable via TCP port 2049 from your "
        "instance.")


def test_spec_that_is_not_an_efs_name_is_refused():
    from .cli import _fs_id_from_cname
    # 1.36 match_device, word for word
    with pytest.raises(FatalError) as e:
        _fs_id_from_cname(_cfg(), "localhost", {}, NO_IMDS)
    assert e.value.message == (
        'The specified CNAME "localhost" did not resolve to a valid DNS name for an EFS mount target. Please refer to '
        "the EFS documentation for mounting with DNS names for examples: "
        "https://docs.aws.amazon.com/efs/latest/ug/mounting-fs-mount-cmd-dns-name.html")
    for bad in ("no-such-host.invalid", "fs-notHex"):
        with pytest.raises(FatalError) as e:
            _fs_id_from_cname(_cfg(), bad, {}, NO_IMDS)
        assert e.value.message == ('Failed to resolve "%s" - check that the specified DNS name is a CNAME record '
                                   "resolving to a valid EFS DNS name" % bad)
