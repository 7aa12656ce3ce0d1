"""The botocore fallback: find a mount target IP with DescribeMountTargets (One Zone, cross-AZ).

botocore is imported here only, when a DNS name did not resolve. Credentials come from
botocore's default chain (environment, AWS_CONFIG_FILE with role_arn + web_identity_token_file,
shared files, container and instance roles), or the awsprofile option.
"""

import logging
import os
import random
import ssl
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional

from .errors import FallbackUnavailable, FatalError

MISSING_BOTOCORE = ("Failed to import necessary dependency botocore, please install botocore first. "
                    "On RHEL 9: python3 -m pip install --require-hashes -r requirements.txt.ocp "
                    "(botocore==1.34.140 with the RPMs python3-jmespath python3-dateutil python3-urllib3 "
                    "python3-six); on Debian: apt-get install python3-botocore.")

log = logging.getLogger(__name__)


@dataclass
class Request:
    """Request is one fallback lookup."""

    fs_id: str
    region: str
    az: Optional[str]
    profile: Optional[str] = None
    fips: bool = False


def endpoint_url(service_env: str, env: Mapping[str, str]) -> Optional[str]:
    """endpoint_url is AWS_ENDPOINT_URL_<SERVICE> or AWS_ENDPOINT_URL, for botocore versions
    (before 1.31) that do not read these variables themselves; None leaves botocore's default."""
    return env.get("AWS_ENDPOINT_URL_" + service_env) or env.get("AWS_ENDPOINT_URL") or None


def ca_bundle(env: Mapping[str, str]) -> Optional[str]:
    """ca_bundle is the CA file botocore verifies AWS endpoints with: the system trust store's (OpenSSL's
    default CA file, which SSL_CERT_FILE overrides), unless AWS_CA_BUNDLE names one, which botocore reads itself.

    botocore installed from its wheel (requirements.txt.ocp) trusts certifi or its own Mozilla bundle, never the
    system store; on OpenShift the cluster's trusted CA bundle (proxy and private endpoint CAs) is mounted over the
    system store at /etc/pki/ca-trust/extracted/pem, which Python's ssl, stunnel and the Go driver already trust.
    RHEL's python3-botocore package is patched to the same effect. None (no such file) leaves botocore's default."""
    if env.get("AWS_CA_BUNDLE"):
        return None
    return ssl.get_default_verify_paths().cafile


def _clients(req: Request, env: Mapping[str, str]) -> "tuple[Any, Any, Any]":
    try:
        import botocore.config
        import botocore.exceptions
        import botocore.session
    except ImportError:
        raise FallbackUnavailable(MISSING_BOTOCORE) from None
    session = botocore.session.get_session()
    if req.profile:
        session.set_config_variable("profile", req.profile)
    cfg = botocore.config.Config(use_fips_endpoint=req.fips, retries={"max_attempts": 3})
    verify = ca_bundle(env)
    efs = session.create_client("efs", region_name=req.region, config=cfg,
                                endpoint_url=endpoint_url("EFS", env), verify=verify)
    ec2 = session.create_client("ec2", region_name=req.region, config=cfg,
                                endpoint_url=endpoint_url("EC2", env), verify=verify)
    return efs, ec2, botocore.exceptions


def _describe_mount_targets(efs: Any, fs_id: str) -> List[Dict[str, Any]]:
    targets = []  # type: List[Dict[str, Any]]
    kwargs = {"FileSystemId": fs_id}
    while True:
        resp = efs.describe_mount_targets(**kwargs)
        targets.extend(resp.get("MountTargets", []))
        marker = resp.get("NextMarker")
        if not marker:
            return targets
        kwargs["Marker"] = marker


def _zone_id(ec2: Any, exc: Any, az: str) -> str:
    try:
        ec2.describe_availability_zones(ZoneNames=[az], DryRun=True)
    except exc.ClientError as e:
        if e.response.get("Error", {}).get("Code") != "DryRunOperation":
            raise
    zones = ec2.describe_availability_zones(ZoneNames=[az]).get("AvailabilityZones", [])
    if not zones or not zones[0].get("ZoneId"):
        raise FatalError("Cannot find the availability zone ID of %s with DescribeAvailabilityZones" % az)
    return zones[0]["ZoneId"]


def choose(targets: List[Dict[str, Any]], fs_id: str, az: Optional[str],
           zone_id: Optional[str]) -> Dict[str, Any]:
    """choose picks the mount target: the one in zone_id, or a random available one when no AZ is known."""
    if zone_id is None:
        available = [t for t in targets if t.get("LifeCycleState") == "available"]
        if not available:
            raise FatalError("Cannot find a mount target in the available state for %s." % fs_id)
        return random.choice(available)
    for t in targets:
        if t.get("AvailabilityZoneId") != zone_id:
            continue
        lifecycle = t.get("LifeCycleState")
        if lifecycle == "available":
            return t
        if lifecycle in ("creating", "updating", "error"):
            raise FatalError("Mount target %s of %s in %s is %s. Please retry in 5 minutes if it is newly "
                             "created." % (t.get("MountTargetId"), fs_id, az, lifecycle))
        raise FatalError("Mount target %s of %s in %s is %s. Please create a new one."
                         % (t.get("MountTargetId"), fs_id, az, lifecycle))
    zones = ", ".join(sorted({str(t.get("AvailabilityZoneName")) for t in targets})) or "none"
    raise FatalError("No matching mount target in the az %s. Please create one mount target in %s, or try the "
                     "mount target in another AZ by passing the availability zone name option. Available mount "
                     "target availability zones are %s." % (az, az, zones))


def _describe_error(exc: Any, e: Exception, req: Request) -> str:
    if isinstance(e, exc.ClientError):
        err = e.response.get("Error", {})
        code, message = err.get("Code", ""), err.get("Message", "")
        if code == "FileSystemNotFound":
            return "The file system %s is not found in %s: %s" % (req.fs_id, req.region, message)
        if code in ("UnauthorizedOperation", "AccessDeniedException", "AccessDenied"):
            return message or "Access denied calling DescribeMountTargets/DescribeAvailabilityZones (%s)" % code
        return "%s: %s" % (code or "ClientError", message)
    if isinstance(e, exc.NoCredentialsError):
        return ("No AWS credentials for DescribeMountTargets: %s. Set AWS_CONFIG_FILE, AWS_PROFILE or the "
                "awsprofile option" % e)
    if isinstance(e, exc.EndpointConnectionError):
        return "Could not reach the AWS endpoint: %s" % e
    return "%s: %s" % (type(e).__name__, e)


def mount_target_ip(req: Request, env: Optional[Mapping[str, str]] = None) -> str:
    """mount_target_ip returns the IP of the mount target to use; errors are FatalError with the
    efs-utils 1.36 messages. The IP is not yet checked for reachability."""
    env = os.environ if env is None else env
    efs, ec2, exc = _clients(req, env)
    try:
        targets = _describe_mount_targets(efs, req.fs_id)
        zone_id = _zone_id(ec2, exc, req.az) if req.az else None
    except FatalError:
        raise
    except (exc.BotoCoreError, exc.ClientError) as e:
        raise FatalError(_describe_error(exc, e, req)) from None
    target = choose(targets, req.fs_id, req.az, zone_id)
    ip = target.get("IpAddress")
    if not ip:
        raise FatalError("Mount target %s has no IP address" % target.get("MountTargetId"))
    log.info("using mount target %s (%s) of %s in %s", target.get("MountTargetId"), ip, req.fs_id,
             target.get("AvailabilityZoneName"))
    return ip
