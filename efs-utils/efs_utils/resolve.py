"""Region, availability zone and the mount target address of a file system.

Order as in efs-utils 1.36: build the DNS name; `mounttargetip` wins; else resolve the name;
else fall back to DescribeMountTargets through botocore (see fallback.py).
"""

import logging
import re
import socket
import string
from dataclasses import dataclass
from typing import Callable, Optional

from .config import Config
from .errors import FatalError
from .imds import IMDS
from .options import Options

NFS_PORT = 2049
CROSSACCOUNT_SUFFIX = "amazonaws.com"
FORMAT_FIELDS = frozenset(["az", "fs_id", "region", "dns_name_suffix"])

log = logging.getLogger(__name__)


@dataclass
class Target:
    """Target is where the mount goes: the DNS name (also the checkHost base) and an IP if known."""

    dns_name: str
    ip: Optional[str] = None

    @property
    def host(self) -> str:
        """host is what stunnel connects to and the NFS source uses."""
        return self.ip or self.dns_name


def region(cfg: Config, imds: IMDS) -> str:
    """region is [mount] region, else the IMDS identity document, else the legacy dns_name_format."""
    value = cfg.region()
    if value:
        return value
    value = imds.region()
    if value:
        return value
    fmt = cfg.dns_name_format()
    m = re.search(r"\.efs\.([a-z0-9-]+)\.", fmt)
    if "{region}" not in fmt and m:
        return m.group(1)
    raise FatalError('Error retrieving region. Please set the "region" parameter in the efs-utils '
                     "configuration file (%s)." % cfg.path)


def format_fields(fmt: str) -> "set[str]":
    return {name for _, name, _, _ in string.Formatter().parse(fmt) if name is not None}


def dns_name(cfg: Config, fs_id: str, region_name: str, az: Optional[str] = None) -> str:
    """dns_name renders dns_name_format; "{az}." is dropped when no AZ is given."""
    fmt = cfg.dns_name_format()
    fields = format_fields(fmt)
    unknown = fields - FORMAT_FIELDS
    if unknown or "fs_id" not in fields:
        raise FatalError('DNS name format "%s" has an incorrect number of replacement fields: want {fs_id} '
                         "and optionally {az}, {region}, {dns_name_suffix}" % fmt)
    if not az:
        fmt = fmt.replace("{az}.", "")
    values = {"fs_id": fs_id, "region": region_name, "dns_name_suffix": cfg.dns_name_suffix(region_name),
              "az": az or ""}
    return fmt.format(**values)


def crossaccount_dns_name(fs_id: str, region_name: str, az_id: str) -> str:
    return "%s.%s.efs.%s.%s" % (az_id, fs_id, region_name, CROSSACCOUNT_SUFFIX)


def check_host_name(name: str, fs_id: str) -> str:
    """check_host_name is the DNS name with any leading AZ (or AZ ID) label removed."""
    i = name.find(fs_id)
    return name[i:] if i > 0 else name


def tcp_reachable(ip: str, port: int = NFS_PORT, attempts: int = 3, timeout: float = 2.0) -> bool:
    for _ in range(attempts):
        try:
            with socket.create_connection((ip, port), timeout=timeout):
                return True
        except OSError:
            continue
    return False


def check_ip(ip: str) -> None:
    if not tcp_reachable(ip):
        raise FatalError("Connection to the mount target IP address %s timeout. Please retry in 5 minutes if the "
                         "mount target is newly created. Otherwise check your VPC and security group "
                         "configuration to ensure your file system is reachable via TCP port %d from your "
                         "instance." % (ip, NFS_PORT))


FallbackFn = Callable[[str], str]


def resolve(cfg: Config, opts: Options, fs_id: str, region_name: str, imds: IMDS,
            fallback: Optional[FallbackFn] = None) -> Target:
    """resolve returns the mount target of fs_id.

    fallback(dns_name) returns a mount target IP or raises FatalError; it runs only when the
    DNS name does not resolve, crossaccount is unset and the config allows it.
    """
    if "crossaccount" in opts:
        az_id = imds.availability_zone_id()
        if not az_id:
            raise FatalError("Cannot retrieve the availability zone ID from instance metadata, which the "
                             '"crossaccount" option needs')
        name = crossaccount_dns_name(fs_id, region_name, az_id)
    else:
        name = dns_name(cfg, fs_id, region_name, opts.get("az"))
    ip = opts.get("mounttargetip")
    if ip:
        check_ip(ip)
        return Target(name, ip)
    try:
        socket.gethostbyname(name)
        return Target(name)
    except OSError:
        log.info('DNS name "%s" does not resolve', name)
    reason = None
    if "crossaccount" in opts:
        reason = 'Fallback to mount target IP address is not supported with the "crossaccount" option.'
    elif not cfg.fallback_enabled():
        reason = ("Fallback to mount target ip address feature is not enabled in config file %s." % cfg.path)
    elif fallback is None:
        reason = "No fallback to the mount target IP address is available."
    if reason is None:
        try:
            return Target(name, fallback(name))
        except FatalError as e:
            reason = e.message
    raise FatalError('Failed to resolve "%s". The file system mount target ip address cannot be found, please '
                     "pass mount target ip address via mount options. \n%s" % (name, reason))
