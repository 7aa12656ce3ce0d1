"""Mounts made by efs-utils 2.x/3.x, whose relay is efs-proxy: what their state files say and the relay we run
for them instead.

Facts from aws/efs-utils (v2.4.1 = 2341e82d, v3.2.0 = def6e74f; src/mount_efs/__init__.py in 2.x,
src/efs_utils_common/proxy.py in 3.x):
- The state file is the 1.36 one (`fs-<id>.<dotted mount point>.<port>`, fields pid, cmd, files, mount_time,
  mountpoint and, for TLS mounts only, the certificate fields); 3.x adds `service_type` ("efs" or "s3files").
- `cmd` is `[<dir>/efs-proxy, <state dir>/stunnel-config.<name>]`, plus `--tls` for TLS mounts (and, in 3.x,
  `--no-direct-s3-read`), after `nsenter --net=<ns>` when `netns` was given. The legacy `stunnel` mount option
  (or OCSP) keeps 1.36's stunnel command instead.
- Non-TLS mounts go through efs-proxy too (mount_nfs mounts 127.0.0.1 with port=<local port> unless in
  stunnel mode), so both kinds need a relay on the local port.
- The configuration file is in stunnel's format: global `fips`, `foreground`, `socket`, `pid`, maybe `debug` and
  `output`; `[efs]` with `client`, `accept = 127.0.0.1:<port>`, `connect = <target>:2049`, and for TLS `verify`,
  `CAfile`, `cert`, `key`, `checkHost`. 3.x adds efs-proxy-only keys (`fs_id`, `region`, `efs_utils_version`,
  `retry_nfs_mount_command_timeout_sec`, `proxy_logging_*`, read-bypass and CloudWatch keys) that stunnel refuses,
  so the file is read, not handed to stunnel.
- efs-proxy writes its pid to the global `pid` path (src/proxy/src/main.rs), which the 2.x/3.x watchdog compares
  with the state file's pid, as 1.36's does for stunnel.

For a TLS mount we run stunnel with a configuration of our own for the same local port, mount target, CA file,
certificate, key and host check; for a plain mount, plainrelay.py. The state file's `cmd` is left as efs-utils
wrote it, so that the upstream driver's watchdog can take the mount back with its efs-proxy.
"""

import os
import sys
from typing import Dict, List, Optional, Tuple

from . import stunnel
from .errors import FatalError
from .paths import Paths

EFS_PROXY = "efs-proxy"
TLS_FLAG = "--tls"
RELAY_CONFIG = "efs-relay.conf"
PLAIN_RELAY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plainrelay.py")

Sections = Dict[str, Dict[str, List[str]]]


def proxy_index(cmd: List[str]) -> Optional[int]:
    """proxy_index is the position of the efs-proxy program in cmd (as 2.x's watchdog command_uses_efs_proxy
    decides: an argument naming efs-proxy), or None for any other relay."""
    for i, arg in enumerate(cmd):
        if os.path.basename(arg) == EFS_PROXY:
            return i
    return None


def parse_config(text: str) -> Sections:
    """parse_config reads a stunnel-format file: "" holds the global options; every key keeps all its values."""
    out = {"": {}}  # type: Sections
    current = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1].strip()
            out.setdefault(current, {})
            continue
        key, sep, value = line.partition("=")
        if sep:
            out[current].setdefault(key.strip(), []).append(value.strip())
    return out


def _one(sec: Dict[str, List[str]], key: str, default: Optional[str] = None) -> Optional[str]:
    vals = sec.get(key)
    return vals[-1] if vals else default


def _hostport(value: Optional[str], what: str, config_file: str) -> Tuple[str, int]:
    host, sep, port = (value or "").rpartition(":")
    if not sep or not host or not port.isdigit():
        raise FatalError("%s: [efs] %s = %r: want host:port" % (config_file, what, value))
    return host.strip("[]"), int(port)


def relay_command(name: str, st: Dict, paths: Paths, python: str = sys.executable) -> List[str]:
    """relay_command is the command of the relay we run for the efs-proxy mount of state file name, writing the
    stunnel configuration it needs. It raises FatalError when the state or its configuration cannot be served."""
    cmd = list(st.get("cmd") or [])
    idx = proxy_index(cmd)
    if idx is None or idx + 1 >= len(cmd):
        raise FatalError("state file %s: cmd %r does not start efs-proxy with a configuration file" % (name, cmd))
    if (st.get("service_type") or "efs") != "efs":
        raise FatalError("state file %s: %s mounts are not supported" % (name, st.get("service_type")))
    prefix, config_file, flags = cmd[:idx], cmd[idx + 1], cmd[idx + 2:]
    try:
        with open(config_file) as f:
            secs = parse_config(f.read())
    except OSError as e:
        raise FatalError("state file %s: cannot read efs-proxy configuration %s: %s" % (name, config_file, e.strerror))
    glob, efs = secs[""], secs.get("efs")
    if efs is None:
        raise FatalError("%s: no [efs] section" % config_file)
    _, port = _hostport(_one(efs, "accept"), "accept", config_file)
    target = _hostport(_one(efs, "connect"), "connect", config_file)
    pid_file = _one(glob, "pid") or os.path.join(paths.state_dir, name + "+", "stunnel.pid")
    mount_dir = os.path.dirname(pid_file)
    os.makedirs(mount_dir, mode=0o750, exist_ok=True)
    if TLS_FLAG not in flags:
        return prefix + [python, PLAIN_RELAY, "--accept", "127.0.0.1:%d" % port,
                         "--connect", "%s:%d" % target, "--pid-file", pid_file]
    binary = paths.stunnel_binary()
    if not binary:
        raise FatalError("state file %s: a TLS relay needs stunnel, which is not installed" % name)
    cert, key = _one(efs, "cert"), _one(efs, "key")
    if not cert or not key:
        raise FatalError("%s: a TLS mount without cert and key in [efs]" % config_file)
    try:
        verify = int(_one(efs, "verify", "2") or "2")
    except ValueError:
        raise FatalError("%s: [efs] verify = %r: want 0-4" % (config_file, _one(efs, "verify"))) from None
    cfg = stunnel.RelayConfig(mount_name=name, state_dir=paths.state_dir, port=port, connect_host=target[0],
                              check_host=_one(efs, "checkHost"), verify=verify, cafile=_one(efs, "CAfile"),
                              cert=cert, key=key, ocsp=False, fips=_one(glob, "fips", "no") == "yes")
    text = stunnel.render(cfg, stunnel.capabilities(binary, paths.state_dir))
    # our stunnel writes its pid where efs-proxy did, so the pid checks of either watchdog keep working
    text = text.replace("pid = %s\n" % os.path.join(paths.state_dir, name + "+", "stunnel.pid"), "pid = %s\n" % pid_file)
    if target[1] != 2049:
        text = text.replace("connect = %s:2049\n" % target[0], "connect = %s:%d\n" % target)
    conf = os.path.join(mount_dir, RELAY_CONFIG)
    tmp = conf + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, conf)
    return prefix + [binary, conf]
