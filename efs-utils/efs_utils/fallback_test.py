import pytest

from . import fallback
from .errors import FatalError

TARGETS = [
    {"MountTargetId": "fsmt-a", "AvailabilityZoneId": "use1-az1", "AvailabilityZoneName": "us-east-1a",
     "LifeCycleState": "available", "IpAddress": "10.0.1.1"},
    {"MountTargetId": "fsmt-b", "AvailabilityZoneId": "use1-az2", "AvailabilityZoneName": "us-east-1b",
     "LifeCycleState": "creating", "IpAddress": "10.0.2.1"},
    {"MountTargetId": "fsmt-c", "AvailabilityZoneId": "use1-az3", "AvailabilityZoneName": "us-east-1c",
     "LifeCycleState": "deleting", "IpAddress": "10.0.3.1"},
]


@pytest.mark.parametrize("az,zone_id,want_id,message", [
    ("us-east-1a", "use1-az1", "fsmt-a", None),
    (None, None, "fsmt-a", None),  # no AZ known: a random available target (only one here)
    ("us-east-1b", "use1-az2", None, "is creating. Please retry in 5 minutes"),
    ("us-east-1c", "use1-az3", None, "is deleting. Please create a new one"),
    ("us-east-1d", "use1-az4", None, "No matching mount target in the az us-east-1d. Please create one mount target in "
                                     "us-east-1d, or try the mount target in another AZ by passing the availability "
                                     "zone name option"),
])
def test_choose(az, zone_id, want_id, message):
    if message:
        with pytest.raises(FatalError) as e:
            fallback.choose(TARGETS, "fs-1", az, zone_id)
        assert message in e.value.message
    else:
        assert fallback.choose(TARGETS, "fs-1", az, zone_id)["MountTargetId"] == want_id


def test_endpoint_url_env():
    assert fallback.endpoint_url("EFS", {}) is None
    assert fallback.endpoint_url("EFS", {"AWS_ENDPOINT_URL": "http://a"}) == "http://a"
    assert fallback.endpoint_url("EFS", {"AWS_ENDPOINT_URL": "http://a", "AWS_ENDPOINT_URL_EFS": "http://e"}) == "http://e"


def test_ca_bundle_is_the_system_trust_store_unless_aws_ca_bundle_names_one(tmp_path, monkeypatch):
    store = tmp_path / "tls-ca-bundle.pem"
    store.write_text("")
    monkeypatch.setenv("SSL_CERT_FILE", str(store))
    assert fallback.ca_bundle({}) == str(store)
    assert fallback.ca_bundle({"AWS_CA_BUNDLE": "/etc/custom.pem"}) is None
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "missing.pem"))
    assert fallback.ca_bundle({}) is None
