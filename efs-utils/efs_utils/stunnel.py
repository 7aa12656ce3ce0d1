"""The stunnel TLS relay of a mount: what the binary supports, its configuration, starting it.

efs-utils 1.36 runs `stunnel -help` on every mount to learn which options the binary knows; we
run it once per stunnel binary and cache the answer in the state dir, keyed by the binary's
path, size and modification time.
"""

import json
import os
import subprocess
from typing import Dict, List, Mapping, NamedTuple, Optional, Sequence

from . import paths
from .errors import FatalError

CAPABILITIES_FILE = "stunnel-capabilities.json"


class Capabilities(NamedTuple):
    """Capabilities are the stunnel options efs-utils adapts to."""

    foreground_quiet: bool = False
    check_host: bool = False
    ocsp_aia: bool = False
    libwrap: bool = False


def parse_help(text: str) -> Capabilities:
    """parse_help reads `stunnel -help` output (stunnel prints it on stderr)."""
    options = {}
    for line in text.splitlines():
        name, sep, rest = line.partition("=")
        if sep and name.strip() and " " not in name.strip():
            options[name.strip()] = rest
    return Capabilities(
        foreground_quiet="quiet" in options.get("foreground", ""),
        check_host="checkHost" in options,
        ocsp_aia="OCSPaia" in options,
        libwrap="libwrap" in options,
    )


def _fingerprint(binary: str) -> str:
    st = os.stat(binary)
    return "%s:%d:%d" % (os.path.realpath(binary), st.st_size, st.st_mtime_ns)


def capabilities(binary: str, cache_dir: str) -> Capabilities:
    """capabilities returns the cached answer for this binary, running `stunnel -help` on a miss."""
    cache = os.path.join(cache_dir, CAPABILITIES_FILE)
    key = _fingerprint(binary)
    try:
        with open(cache) as f:
            data = json.load(f)
        if data.get("binary") == key:
            return Capabilities(**data["capabilities"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    proc = subprocess.run([binary, "-help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    caps = parse_help((proc.stderr + proc.stdout).decode("utf-8", "replace"))
    tmp = "%s.%d.tmp" % (cache, os.getpid())
    try:
        with open(tmp, "w") as f:
            json.dump({"binary": key, "capabilities": caps._asdict()}, f)
        os.replace(tmp, cache)
    except OSError:
        pass
    return caps


class RelayConfig(NamedTuple):
    """RelayConfig is everything written into one mount's stunnel configuration."""

    mount_name: str
    state_dir: str
    port: int
    connect_host: str
    check_host: Optional[str]
    verify: int
    cafile: Optional[str]
    cert: str
    key: str
    ocsp: bool
    fips: bool
    debug: bool = False
    log_file: Optional[str] = None


def render(cfg: RelayConfig, caps: Capabilities) -> str:
    """render returns the stunnel configuration text of efs-utils 1.36 for cfg."""
    glob = [("fips", "yes" if cfg.fips else "no"),
            ("foreground", "quiet" if caps.foreground_quiet else "yes"),
            ("socket", "l:SO_REUSEADDR=yes"),
            ("socket", "a:SO_BINDTODEVICE=lo")]
    if cfg.debug:
        glob = [kv for kv in glob if kv[0] != "foreground"] + [("foreground", "yes"), ("debug", "debug")]
        if cfg.log_file:
            glob.append(("output", cfg.log_file))
    glob.append(("pid", os.path.join(cfg.state_dir, cfg.mount_name + "+", "stunnel.pid")))
    efs = [("client", "yes"),
           ("accept", "127.0.0.1:%d" % cfg.port),
           ("connect", "%s:2049" % cfg.connect_host),
           ("sslVersion", "TLSv1.2"),
           ("renegotiation", "no"),
           ("TIMEOUTbusy", "20"),
           ("TIMEOUTclose", "0"),
           ("TIMEOUTidle", "70"),
           ("delay", "yes"),
           ("verify", str(cfg.verify))]
    if cfg.verify > 0:
        if not cfg.cafile or not os.path.exists(cfg.cafile):
            # 1.36 add_stunnel_ca_options
            raise FatalError("Failed to find certificate authority file for verification",
                             log_message='Failed to find CAfile "%s"' % cfg.cafile)
        efs.append(("CAfile", cfg.cafile))
    efs += [("cert", cfg.cert), ("key", cfg.key)]
    if cfg.check_host:
        if not caps.check_host:
            raise FatalError("The installed stunnel does not support checkHost: install stunnel 5 or set "
                             "stunnel_check_cert_hostname = false in the efs-utils config")
        efs.append(("checkHost", cfg.check_host))
    if cfg.ocsp:
        if not caps.ocsp_aia:
            raise FatalError("The installed stunnel does not support OCSPaia: install stunnel 5 or mount with noocsp")
        efs.append(("OCSPaia", "yes"))
    if caps.libwrap:
        efs.append(("libwrap", "no"))
    lines = ["%s = %s" % kv for kv in glob] + ["", "[efs]"] + ["%s = %s" % kv for kv in efs]
    return "\n".join(lines) + "\n"


def write_config(cfg: RelayConfig, caps: Capabilities) -> str:
    """write_config writes <state_dir>/stunnel-config.<mount name> and returns its path."""
    path = os.path.join(cfg.state_dir, "stunnel-config." + cfg.mount_name)
    with open(path, "w") as f:
        f.write(render(cfg, caps))
    return path


def start(cmd: Sequence[str], env: Optional[Mapping[str, str]] = None) -> "subprocess.Popen[bytes]":
    """start runs stunnel in its own session so it can be stopped with killpg."""
    try:
        return subprocess.Popen(list(cmd), executable=paths.executable(cmd[0]), stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, start_new_session=True,
                                close_fds=True, env=env)
    except OSError as e:
        raise FatalError("Failed to start TLS tunnel (%s): %s" % (" ".join(cmd), e.strerror)) from None


def process_info(pid: int) -> Optional[Dict[str, str]]:
    """process_info reads /proc/<pid>/stat: the command name and the state letter.

    It never reads /proc/<pid>/cmdline, which blocks while the process's memory is locked
    (aws/efs-utils#374: a hung NFS mount froze the 1.36 watchdog).
    """
    try:
        with open("/proc/%d/stat" % pid) as f:
            text = f.read()
    except (OSError, ValueError):
        return None
    lpar, rpar = text.find("("), text.rfind(")")
    if lpar < 0 or rpar < 0:
        return None
    fields = text[rpar + 2:].split()
    return {"comm": text[lpar + 1:rpar], "state": fields[0] if fields else "?"}


# RELAY_NAMES are the process names of a mount's relay: stunnel, efs-utils 2.x/3.x's efs-proxy, and our plain
# relay for non-TLS efs-proxy mounts (plainrelay.py).
RELAY_NAMES = ("stunnel", "efs-proxy", "efs-relay")


def is_running(pid: Optional[int]) -> bool:
    """is_running reports whether pid is a live (not zombie) relay process."""
    if not pid or pid <= 0:
        return False
    info = process_info(pid)
    return bool(info) and info["comm"].startswith(RELAY_NAMES) and info["state"] not in ("Z", "X")


def command(binary: str, config_file: str, netns: Optional[str] = None) -> List[str]:
    """command is the argv stored in the state file: [nsenter --net=NS] stunnel <config>."""
    prefix = ["nsenter", "--net=" + netns] if netns else []
    return prefix + [binary, config_file]
