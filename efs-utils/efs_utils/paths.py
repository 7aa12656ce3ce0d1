"""Where efs-utils finds its files and programs.

Production defaults are the efs-utils 1.36 locations. Each can be overridden with an
environment variable, which tests use to run against scratch directories; nothing else
changes when an override is set.
"""

import os
import shutil
from typing import Dict, Mapping, NamedTuple, Optional

CONFIG_DIR = "/etc/amazon/efs"
CONFIG_FILE = CONFIG_DIR + "/efs-utils.conf"
PRIVATE_KEY = CONFIG_DIR + "/privateKey.pem"
STATE_DIR = "/var/run/efs"
LOG_DIR = "/var/log/amazon/efs"
MOUNT_NFS4 = "/sbin/mount.nfs4"
PROC_MOUNTS = "/proc/mounts"
IMDS_ENDPOINT = "http://169.254.169.254"
ECS_CREDENTIALS_ENDPOINT = "http://169.254.170.2"

# The PATH efs-utils 1.36 searches for stunnel, whatever the caller's PATH is.
STUNNEL_SEARCH_PATH = "/sbin:/usr/sbin:/usr/local/sbin:/root/bin:/usr/local/bin:/usr/bin:/bin"

ENV_CONFIG_FILE = "EFS_UTILS_CONFIG_FILE"
ENV_PRIVATE_KEY = "EFS_UTILS_PRIVATE_KEY"
ENV_STATE_DIR = "EFS_UTILS_STATE_DIR"
ENV_LOG_DIR = "EFS_UTILS_LOG_DIR"
ENV_MOUNT_NFS4 = "EFS_UTILS_MOUNT_NFS4"
ENV_STUNNEL = "EFS_UTILS_STUNNEL"
ENV_PROC_MOUNTS = "EFS_UTILS_PROC_MOUNTS"
ENV_ECS_ENDPOINT = "EFS_UTILS_ECS_CREDENTIALS_ENDPOINT"
# Same variable botocore reads for the instance metadata service.
ENV_IMDS_ENDPOINT = "AWS_EC2_METADATA_SERVICE_ENDPOINT"


class Paths(NamedTuple):
    """Paths is the set of file locations and programs one process uses."""

    config_file: str = CONFIG_FILE
    private_key: str = PRIVATE_KEY
    state_dir: str = STATE_DIR
    log_dir: str = LOG_DIR
    mount_nfs4: str = MOUNT_NFS4
    stunnel: Optional[str] = None
    proc_mounts: str = PROC_MOUNTS
    imds_endpoint: str = IMDS_ENDPOINT
    ecs_endpoint: str = ECS_CREDENTIALS_ENDPOINT

    @property
    def lock_file(self) -> str:
        """The private-key lock of efs-utils 1.36 (O_EXCL file in the state dir)."""
        return os.path.join(self.state_dir, "efs-utils-lock")

    def stunnel_binary(self) -> Optional[str]:
        """The stunnel program: the override, else `stunnel` on the fixed system PATH."""
        if self.stunnel:
            return self.stunnel
        return shutil.which("stunnel", path=STUNNEL_SEARCH_PATH)


def fixed_path_env(env: Mapping[str, str]) -> Dict[str, str]:
    """fixed_path_env is env with PATH set to STUNNEL_SEARCH_PATH: efs-utils 1.36 puts that PATH into its own
    environment (os.putenv in find_command_path) before it starts stunnel, so stunnel, mount.nfs4 and nsenter
    of a TLS mount run with it, whatever the caller's PATH."""
    out = dict(env)
    out["PATH"] = STUNNEL_SEARCH_PATH
    return out


def executable(argv0: str) -> str:
    """executable finds a program named without a directory on the caller's PATH, as 1.36's subprocess calls do
    when the child's environment has the fixed PATH (Python looks the program up in os.environ)."""
    if os.sep in argv0:
        return argv0
    return shutil.which(argv0) or argv0


def from_env(env: Optional[Mapping[str, str]] = None) -> Paths:
    """from_env returns the production paths with the overrides set in env (os.environ by default)."""
    if env is None:
        env = os.environ
    return Paths(
        config_file=env.get(ENV_CONFIG_FILE) or CONFIG_FILE,
        private_key=env.get(ENV_PRIVATE_KEY) or PRIVATE_KEY,
        state_dir=env.get(ENV_STATE_DIR) or STATE_DIR,
        log_dir=env.get(ENV_LOG_DIR) or LOG_DIR,
        mount_nfs4=env.get(ENV_MOUNT_NFS4) or MOUNT_NFS4,
        stunnel=env.get(ENV_STUNNEL) or None,
        proc_mounts=env.get(ENV_PROC_MOUNTS) or PROC_MOUNTS,
        imds_endpoint=(env.get(ENV_IMDS_ENDPOINT) or IMDS_ENDPOINT).rstrip("/"),
        ecs_endpoint=(env.get(ENV_ECS_ENDPOINT) or ECS_CREDENTIALS_ENDPOINT).rstrip("/"),
    )
