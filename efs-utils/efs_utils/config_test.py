import pytest

from . import config
from .conftest import DIST_CONF
from .errors import FatalError


def _dist(env=None):
    return config.load(DIST_CONF, env or {})


def test_shipped_config_values():
    c = _dist()
    assert c.logging_level() == "INFO" and c.logging_max_bytes() == 1048576 and c.logging_file_count() == 10
    assert c.state_file_dir_mode() == 0o750
    assert c.dns_name_format() == "{az}.{fs_id}.efs.{region}.{dns_name_suffix}"
    assert c.region() is None
    assert c.port_range() == (20049, 21049)
    assert c.stunnel_cafile("us-east-1") == "/etc/amazon/efs/efs-utils.crt"
    assert c.stunnel_check_cert_hostname() and not c.stunnel_check_cert_validity()
    assert not c.fips_mode_enabled() and c.optimize_readahead() and c.fallback_enabled()
    assert c.retry_nfs_mount() == (True, 3, 15)
    assert c.watchdog_enabled() and c.poll_interval_sec() == 1 and c.unmount_grace_period_sec() == 30
    assert c.unmount_count_for_consistency() == 5 and c.tls_cert_renewal_interval_min() == 60
    assert c.stunnel_health_check() == (True, 5, 30)
    assert c.client_source() == "unknown"


@pytest.mark.parametrize("region,suffix,cafile", [
    ("us-east-1", "amazonaws.com", "/etc/amazon/efs/efs-utils.crt"),
    ("cn-north-1", "amazonaws.com.cn", "/etc/amazon/efs/efs-utils.crt"),
    ("cn-northwest-1", "amazonaws.com.cn", "/etc/amazon/efs/efs-utils.crt"),
    ("us-iso-east-1", "c2s.ic.gov", "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem"),
    ("us-iso-west-1", "c2s.ic.gov", "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem"),
    ("us-isob-east-1", "sc2s.sgov.gov", "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem"),
])
def test_region_sections(region, suffix, cafile):
    c = _dist()
    assert c.dns_name_suffix(region) == suffix and c.stunnel_cafile(region) == cafile


MINIMAL = """[DEFAULT]
logging_level = verbose
logging_max_bytes = 10
logging_file_count = 1
[mount]
dns_name_format = {fs_id}.efs.{region}.{dns_name_suffix}
dns_name_suffix = amazonaws.com
port_range_lower_bound = 1
port_range_upper_bound = 2
[mount-watchdog]
poll_interval_sec = 1
unmount_grace_period_sec = 30
[client-info]
source = k8s
"""


def test_code_defaults_when_keys_missing():
    c = config.parse(MINIMAL, "m.conf", {})
    assert c.logging_level() == "INFO"  # bad value -> INFO
    assert c.state_file_dir_mode() == 0o750
    assert c.optimize_readahead() is False  # false when missing (1.36)
    assert c.fallback_enabled() and c.stunnel_check_cert_hostname() and not c.disable_imds_token()
    assert c.stunnel_cafile(None) == "/etc/amazon/efs/efs-utils.crt"
    assert c.client_source() == "k8s"


@pytest.mark.parametrize("drop,key", [
    ("logging_level = verbose\n", "logging_level"),
    ("poll_interval_sec = 1\n", "poll_interval_sec"),
    ("unmount_grace_period_sec = 30\n", "unmount_grace_period_sec"),
    ("port_range_lower_bound = 1\n", "port_range_lower_bound"),
])
def test_required_keys(drop, key):
    c = config.parse(MINIMAL.replace(drop, ""), "m.conf", {})
    getter = {"logging_level": c.logging_level, "poll_interval_sec": c.poll_interval_sec,
              "unmount_grace_period_sec": c.unmount_grace_period_sec, "port_range_lower_bound": c.port_range}[key]
    with pytest.raises(FatalError, match='m.conf: required key "%s" is missing' % key):
        getter()


def test_bad_values_name_the_key():
    c = config.parse(MINIMAL.replace("port_range_upper_bound = 2", "port_range_upper_bound = 1"), "m.conf", {})
    with pytest.raises(FatalError, match="port_range_lower_bound \\(1\\) must be less than"):
        c.port_range()
    c = config.parse(MINIMAL.replace("[mount]\n", "[mount]\nfips_mode_enabled = maybe\n"), "m.conf", {})
    with pytest.raises(FatalError, match='fips_mode_enabled = "maybe": want true or false'):
        c.fips_mode_enabled()


def test_fips_from_environment():
    assert config.parse(MINIMAL, "m", {"AWS_USE_FIPS_ENDPOINT": "TRUE"}).fips_mode_enabled()
    assert not config.parse(MINIMAL, "m", {"AWS_USE_FIPS_ENDPOINT": "false"}).fips_mode_enabled()


def test_long_client_source_is_unknown():
    c = config.parse(MINIMAL.replace("source = k8s", "source = " + "x" * 101), "m", {})
    assert c.client_source() == "unknown"


def test_missing_file_names_override(tmp_path):
    with pytest.raises(FatalError, match="EFS_UTILS_CONFIG_FILE"):
        config.load(str(tmp_path / "nope.conf"))


def test_config_parsing_properties():
    """Fuzz-style: random config text either parses or fails with FatalError naming the file."""
    import random
    rng = random.Random(7)
    pieces = ["[mount]\n", "[DEFAULT]\n", "[mount-watchdog]\n", "[mount.us-east-1]\n", "region = x\n",
              "port_range_lower_bound = 5\n", "port_range_upper_bound = a\n", "poll_interval_sec = 2\n",
              "stunnel_check_cert_hostname = maybe\n", "garbage\n", "= x\n", "k: v\n", "\n", "[\n", "%(x)s = 1\n"]
    for _ in range(2000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
        try:
            c = config.parse(text, "fuzz.conf", {})
        except FatalError as e:
            assert "fuzz.conf" in e.message
            continue
        for getter in (c.port_range, c.poll_interval_sec, c.stunnel_check_cert_hostname, c.region,
                       c.dns_name_format, c.logging_level):
            try:
                getter()
            except FatalError as e:
                assert "fuzz.conf" in e.message


def test_reads_the_config_the_csi_driver_renders():
    import os
    from .conftest import HERE
    from . import resolve
    c = config.load(os.path.join(HERE, "testdata", "efs-utils-csi.conf"), {})
    assert c.logging_level() == "DEBUG" and c.region() == "eu-west-1" and c.fips_mode_enabled()
    assert c.port_range() == (20049, 21449) and c.client_source() == "k8s"
    assert c.stunnel_debug_enabled() and not c.optimize_readahead()
    assert c.dns_name_suffix("eu-isoe-west-1") == "cloud.adc-e.uk"
    assert c.stunnel_cafile("us-isof-south-1") == "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem"
    assert resolve.dns_name(c, "fs-1", "us-isof-south-1", "us-isof-south-1a") == \
        "us-isof-south-1a.fs-1.efs.us-isof-south-1.csp.hci.ic.gov"
    assert c.stunnel_health_check() == (True, 5, 30)  # keys the driver leaves out: 1.36 code defaults
