"""The efs-utils.conf file: typed access with the efs-utils 1.36 defaults and required keys."""

import configparser
import os
from typing import Mapping, Optional

from .errors import FatalError

DEFAULT = "DEFAULT"
MOUNT = "mount"
WATCHDOG = "mount-watchdog"
CLIENT_INFO = "client-info"
CLOUDWATCH = "cloudwatch-log"

DEFAULT_DNS_NAME_FORMAT = "{az}.{fs_id}.efs.{region}.{dns_name_suffix}"
DEFAULT_STUNNEL_CAFILE = "/etc/amazon/efs/efs-utils.crt"
CLIENT_SOURCE_MAX = 100


class Config:
    """Config wraps a parsed efs-utils.conf.

    Getters follow efs-utils 1.36: a "required" key that is missing is a fatal error naming
    the file; other keys fall back to the code default of 1.36.
    """

    def __init__(self, parser: configparser.ConfigParser, path: str,
                 env: Optional[Mapping[str, str]] = None):
        self._p = parser
        self.path = path
        self._env = os.environ if env is None else env

    # -- generic accessors -------------------------------------------------------------

    def has(self, section: str, key: str) -> bool:
        """has reports whether key is set in section (or [DEFAULT])."""
        if section == DEFAULT:
            return key in self._p.defaults()
        return self._p.has_option(section, key)

    def get(self, section: str, key: str, default: Optional[str] = None,
            required: bool = False) -> Optional[str]:
        """get returns the raw value, the default, or fails for a missing required key."""
        if self.has(section, key):
            if section == DEFAULT:
                return self._p.defaults()[key]
            return self._p.get(section, key)
        if required:
            raise FatalError('efs-utils config %s: required key "%s" is missing from section [%s]'
                             % (self.path, key, section))
        return default

    def get_bool(self, section: str, key: str, default: bool) -> bool:
        """get_bool reads true/false (also yes/no, on/off, 1/0); a bad value is an error."""
        raw = self.get(section, key)
        if raw is None:
            return default
        value = raw.strip().lower()
        if value in ("true", "yes", "on", "1"):
            return True
        if value in ("false", "no", "off", "0"):
            return False
        raise FatalError('efs-utils config %s: [%s] %s = "%s": want true or false'
                         % (self.path, section, key, raw))

    def get_int(self, section: str, key: str, default: Optional[int] = None,
                required: bool = False) -> int:
        """get_int reads an integer key; a bad value names the key and the value."""
        raw = self.get(section, key, required=required)
        if raw is None:
            if default is None:
                raise FatalError('efs-utils config %s: required key "%s" is missing from section [%s]'
                                 % (self.path, key, section))
            return default
        try:
            return int(raw.strip())
        except ValueError:
            raise FatalError('efs-utils config %s: [%s] %s = "%s": want an integer'
                             % (self.path, section, key, raw)) from None

    def region_value(self, region: Optional[str], key: str, default: Optional[str] = None,
                     required: bool = False) -> Optional[str]:
        """region_value reads key from [mount.<region>] if set there, else from [mount]."""
        if region:
            section = "%s.%s" % (MOUNT, region)
            if self._p.has_section(section) and self._p.has_option(section, key):
                return self._p.get(section, key)
        return self.get(MOUNT, key, default=default, required=required)

    # -- [DEFAULT] -----------------------------------------------------------------------

    def logging_level(self) -> str:
        """logging_level is the configured level; an unknown name becomes INFO."""
        level = (self.get(DEFAULT, "logging_level", required=True) or "").strip().upper()
        if level not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
            return "INFO"
        return level

    def logging_max_bytes(self) -> int:
        return self.get_int(DEFAULT, "logging_max_bytes", required=True)

    def logging_file_count(self) -> int:
        return self.get_int(DEFAULT, "logging_file_count", required=True)

    def state_file_dir_mode(self) -> int:
        """state_file_dir_mode is the octal mode of the state dir and per-mount dirs (0o750)."""
        raw = self.get(DEFAULT, "state_file_dir_mode")
        if raw is None:
            return 0o750
        try:
            return int(raw.strip(), 8)
        except ValueError:
            raise FatalError('efs-utils config %s: state_file_dir_mode = "%s": want an octal mode such as 750'
                             % (self.path, raw)) from None

    # -- [mount] -------------------------------------------------------------------------

    def region(self) -> Optional[str]:
        value = self.get(MOUNT, "region")
        return value.strip() if value else None

    def dns_name_format(self) -> str:
        return self.get(MOUNT, "dns_name_format", required=True) or DEFAULT_DNS_NAME_FORMAT

    def dns_name_suffix(self, region: Optional[str]) -> str:
        return self.region_value(region, "dns_name_suffix", required=True) or "amazonaws.com"

    def stunnel_cafile(self, region: Optional[str]) -> str:
        return self.region_value(region, "stunnel_cafile", default=DEFAULT_STUNNEL_CAFILE) \
            or DEFAULT_STUNNEL_CAFILE

    def stunnel_debug_enabled(self) -> bool:
        return self.get_bool(MOUNT, "stunnel_debug_enabled", False)

    def stunnel_logs_file(self) -> Optional[str]:
        return self.get(MOUNT, "stunnel_logs_file")

    def stunnel_check_cert_hostname(self) -> bool:
        return self.get_bool(MOUNT, "stunnel_check_cert_hostname", True)

    def stunnel_check_cert_validity(self) -> bool:
        return self.get_bool(MOUNT, "stunnel_check_cert_validity", False)

    def fips_mode_enabled(self) -> bool:
        """fips_mode_enabled is the config key, or AWS_USE_FIPS_ENDPOINT=true in the environment."""
        if self._env.get("AWS_USE_FIPS_ENDPOINT", "").strip().lower() == "true":
            return True
        return self.get_bool(MOUNT, "fips_mode_enabled", False)

    def port_range(self) -> "tuple[int, int]":
        """port_range is [lower, upper) for TLS ports; both keys are required and lower < upper."""
        lower = self.get_int(MOUNT, "port_range_lower_bound", required=True)
        upper = self.get_int(MOUNT, "port_range_upper_bound", required=True)
        if lower >= upper:
            raise FatalError("efs-utils config %s: port_range_lower_bound (%d) must be less than "
                             "port_range_upper_bound (%d)" % (self.path, lower, upper))
        return lower, upper

    def optimize_readahead(self) -> bool:
        return self.get_bool(MOUNT, "optimize_readahead", False)

    def fallback_enabled(self) -> bool:
        return self.get_bool(MOUNT, "fall_back_to_mount_target_ip_address_enabled", True)

    def disable_imds_token(self) -> bool:
        return self.get_bool(MOUNT, "disable_fetch_ec2_metadata_token", False)

    def retry_nfs_mount(self) -> "tuple[bool, int, int]":
        """retry_nfs_mount is (enabled, count, timeout seconds) for mount.nfs4 retries."""
        return (self.get_bool(MOUNT, "retry_nfs_mount_command", True),
                self.get_int(MOUNT, "retry_nfs_mount_command_count", 3),
                self.get_int(MOUNT, "retry_nfs_mount_command_timeout_sec", 15))

    # -- [mount-watchdog] ----------------------------------------------------------------

    def watchdog_enabled(self) -> bool:
        return self.get_bool(WATCHDOG, "enabled", True)

    def poll_interval_sec(self) -> int:
        return self.get_int(WATCHDOG, "poll_interval_sec", required=True)

    def unmount_count_for_consistency(self) -> int:
        return self.get_int(WATCHDOG, "unmount_count_for_consistency", 5)

    def unmount_grace_period_sec(self) -> int:
        return self.get_int(WATCHDOG, "unmount_grace_period_sec", required=True)

    def tls_cert_renewal_interval_min(self) -> int:
        return self.get_int(WATCHDOG, "tls_cert_renewal_interval_min", 60)

    def stunnel_health_check(self) -> "tuple[bool, int, int]":
        """stunnel_health_check is (enabled, interval minutes, df timeout seconds)."""
        return (self.get_bool(WATCHDOG, "stunnel_health_check_enabled", True),
                self.get_int(WATCHDOG, "stunnel_health_check_interval_min", 5),
                self.get_int(WATCHDOG, "stunnel_health_check_command_timeout_sec", 30))

    # -- [client-info] -------------------------------------------------------------------

    def client_source(self) -> str:
        """client_source is [client-info] source, "unknown" when unset or longer than 100 characters."""
        source = self.get(CLIENT_INFO, "source")
        if not source or len(source) > CLIENT_SOURCE_MAX:
            return "unknown"
        return source


def parse(text: str, path: str = "<string>", env: Optional[Mapping[str, str]] = None) -> Config:
    """parse reads config text; a syntax error names the file."""
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text, source=path)
    except configparser.Error as e:
        raise FatalError("efs-utils config %s: %s" % (path, e)) from None
    return Config(parser, path, env)


def load(path: str, env: Optional[Mapping[str, str]] = None) -> Config:
    """load reads the config file at path; a missing file is fatal and names the override."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise FatalError("cannot read efs-utils config %s: %s (set EFS_UTILS_CONFIG_FILE to use another file)"
                         % (path, e.strerror)) from None
    return parse(text, path, env)
