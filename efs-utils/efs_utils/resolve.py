"""Region, availability zone and the mount target address of a file system.

Order as in efs-utils 1.36: build the DNS name; `mounttargetip` wins; else resolve the name;
else fall back to DescribeMountTargets through botocore (see fallback.py).
"""

import logging
import re
import socket
import string
import time
from typing import Callable, NamedTuple, Optional

from .config import Config
from .errors import FallbackUnavailable, FatalError
from .imds import IMDS
from .logs import FILE_ONLY
from .options import Options

NFS_PORT = 2049
CROSSACCOUNT_SUFFIX = "amazonaws.com"
DNS_HELP_URL = "https://docs.aws.amazon.com/console/efs/mount-dns-name"
FORMAT_FIELDS = frozenset(["az", "fs_id", "region", "dns_name_suffix"])

log = logging.getLogger(__name__)


class Target(NamedTuple):
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


def connect_failure(ip: str, via_option: bool, ns: Optional[str] = None, attempts: int = 3,
                    timeout: float = 2.0, pause: float = 0.5) -> Optional[str]:
    """connect_failure is 1.36's mount_target_ip_address_can_be_resolved: None when TCP 2049 of ip accepts
    (inside the netns namespace if given), else 1.36's reason. Only timeouts are retried (3 tries, 0.5 s apart);
    any other error, such as a refused connection, is reported at once."""
    from . import netns
    for attempt in range(attempts):
        try:
            with netns.entered(ns):
                socket.create_connection((ip, NFS_PORT), timeout=timeout).close()
            return None
        except socket.timeout:
            if attempt < attempts - 1:
                log.warning("The ip address %s cannot be connected yet, sleep 0.5s, %d retry time(s) left",
                            ip, attempts - attempt - 1, extra=FILE_ONLY)  # 1.36 logs it, stderr stays quiet
                time.sleep(pause)
                continue
            return ("Connection to the mount target IP address %s timeout. Please retry in 5 minutes if the mount "
                    "target is newly created. Otherwise check your VPC and security group configuration to ensure "
                    "your file system is reachable via TCP port %d from your instance." % (ip, NFS_PORT))
        except Exception as e:  # 1.36 reports any other error the same way
            hint = " Please check if the mount target ip address passed via mount option is correct." \
                if via_option else ""
            return "Unknown error when connecting to mount target IP address %s, %s.%s" % (ip, e, hint)
    return None


def connect_failure_message(ip: Optional[str], reason: str, dns_name: Optional[str] = None) -> str:
    """connect_failure_message is 1.36's throw_ip_address_connect_failure_with_fallback_message."""
    dns = 'Failed to resolve "%s". ' % dns_name if dns_name else ""
    if ip:
        what = "Cannot connect to file system mount target ip address %s. " % ip
    else:
        what = ("The file system mount target ip address cannot be found, please pass mount target ip address via "
                "mount options. ")
    return "%s%s%s" % (dns, what, "\n%s" % reason if reason else "")


def check_ip(ip: str, ns: Optional[str] = None, dns_name: Optional[str] = None) -> None:
    """check_ip fails as 1.36 does when ip does not accept TCP 2049: for a mounttargetip option (no dns_name),
    or for the fallback's mount target of dns_name."""
    reason = connect_failure(ip, dns_name is None, ns)
    if reason:
        raise FatalError(connect_failure_message(ip, reason, dns_name))


def target_dns_name(cfg: Config, opts: Options, fs_id: str, region_name: str, imds: IMDS) -> str:
    """target_dns_name is the mount target's DNS name: the crossaccount form, else dns_name_format."""
    if "crossaccount" in opts:
        az_id = imds.availability_zone_id()
        if not az_id:
            raise FatalError("Cannot retrieve AZ-ID from metadata service. This is required for the crossaccount "
                             "mount option.")
        return crossaccount_dns_name(fs_id, region_name, az_id)
    return dns_name(cfg, fs_id, region_name, opts.get("az"))


FallbackFn = Callable[[str], str]


def resolve(cfg: Config, opts: Options, fs_id: str, region_name: str, imds: IMDS,
            fallback: Optional[FallbackFn] = None) -> Target:
    """resolve returns the mount target of fs_id.

    fallback(dns_name) returns a mount target IP or raises FatalError; it runs only when the
    DNS name does not resolve, crossaccount is unset and the config allows it.
    """
    name = target_dns_name(cfg, opts, fs_id, region_name, imds)
    if "mounttargetip" in opts:
        if "crossaccount" in opts:  # checked here, after the crossaccount name, as in 1.36
            raise FatalError("mounttargetip option is incompatible with crossaccount option.")
        ip = opts.get("mounttargetip") or ""
        check_ip(ip, opts.get("netns"))
        return Target(name, ip)
    try:
        socket.gethostbyname(name)
        return Target(name)
    except OSError:
        log.info('DNS name "%s" does not resolve', name)
    if "crossaccount" in opts:
        raise FatalError(dns_failure_message(name, "Fallback to mount target ip address feature is not available "
                                                    "when the crossaccount option is used."))
    if not cfg.fallback_enabled():
        raise FatalError(dns_failure_message(name, "Fallback to mount target ip address feature is not enabled in "
                                                   "config file %s." % cfg.path))
    if fallback is None:
        raise FatalError(dns_failure_message(name, "No fallback to the mount target IP address is available."))
    try:
        ip = fallback(name)
    except FallbackUnavailable as e:
        raise FatalError(dns_failure_message(name, e.message)) from None
    except FatalError as e:
        raise FatalError(connect_failure_message(None, e.message, name)) from None
    check_ip(ip, opts.get("netns"), dns_name=name)
    return Target(name, ip)


def dns_failure_message(dns_name: str, reason: str) -> str:
    """dns_failure_message is 1.36's throw_dns_resolve_failure_with_fallback_message."""
    return ('Failed to resolve "%s" - check that your file system ID is correct, and ensure that the VPC has an EFS '
            "mount target for this file system ID.\nSee %s for more detail.\nAttempting to lookup mount target ip "
            "address using botocore. %s" % (dns_name, DNS_HELP_URL, reason))
