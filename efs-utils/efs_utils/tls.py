"""A TLS mount: port, state file, certificate, stunnel relay, then mount.nfs4 through it."""

import logging
import os
import shutil
import socket
import threading
import time
from typing import Callable, Mapping, NamedTuple, Optional

from . import certificate, netns, ports, state, stunnel
from .config import Config
from .errors import FatalError
from .imds import IMDS
from .options import Options, tls_port, verify_level
from .paths import Paths, fixed_path_env
from .resolve import Target, check_host_name
from .version import VERSION

MONITOR_INTERVAL = 0.5

log = logging.getLogger(__name__)


class Relay(NamedTuple):
    """Relay is a started stunnel for one mount."""

    name: str
    port: int
    proc: "object"


def _credentials(opts: Options, region: str, imds: IMDS, paths: Paths, env: Mapping[str, str]):
    if "iam" not in opts:
        return None, None
    from . import credentials
    creds, source = credentials.get(region, imds, paths.ecs_endpoint, env,
                                    awscredsuri=opts.get("awscredsuri"), awsprofile=opts.get("awsprofile"),
                                    role_arn=opts.get("rolearn"), jwt_path=opts.get("jwtpath"))
    return creds, source


def _wait_listening(port: int, proc, budget: float = 0.25, interval: float = 0.005,
                    ns: Optional[str] = None) -> None:
    """_wait_listening waits up to 250 ms (1.36: 5 tries 50 ms apart) for stunnel to accept, polling
    finely so a ready relay costs no sleep; it returns either way, as 1.36 does."""
    for _ in range(int(budget / interval)):
        if proc.poll() is not None:
            return
        try:
            with netns.entered(ns):
                with socket.create_connection(("127.0.0.1", port), timeout=0.05):
                    return
        except OSError:
            time.sleep(interval)


def start_relay(cfg: Config, paths: Paths, opts: Options, fs_id: str, mountpoint: str, target: Target,
                region: str, imds: IMDS, env: Mapping[str, str]) -> Relay:
    """start_relay prepares and starts the stunnel of one mount and returns it with the temporary
    state file ~<name> written; the caller renames it with state.finish."""
    mode = cfg.state_file_dir_mode()
    state.ensure_dir(paths.state_dir, mode)
    lower, upper = cfg.port_range()
    tlsport = tls_port(opts)
    ns = opts.get("netns")
    with netns.entered(ns):
        port, sock = ports.choose(paths.state_dir, lower, upper, tlsport, cfg.path)
    name = state.mount_name(fs_id, mountpoint, port)
    temp = state.TEMP_PREFIX + name
    try:
        state.write(paths.state_dir, temp, {"pid": -1, "mountpoint": mountpoint})
    finally:
        sock.close()
    try:
        doc = _prepare(cfg, paths, opts, fs_id, mountpoint, target, region, imds, env, name, port, ns)
    except BaseException:
        # nothing runs yet: leave no state behind for either watchdog to trip over
        _discard(paths.state_dir, name)
        raise
    proc = stunnel.start(doc["cmd"], env=fixed_path_env(env))
    doc["pid"] = proc.pid
    state.write(paths.state_dir, temp, doc)
    _wait_listening(port, proc, ns=ns)
    if proc.poll() is not None:
        raise tunnel_failure(fs_id, proc)
    return Relay(name, port, proc)


def tunnel_failure(fs_id: str, proc) -> FatalError:
    """tunnel_failure is 1.36's report of a stunnel that exited (test_tunnel_process): a pointer to mount.log
    for the user, stunnel's exit code and stderr in the log."""
    err = proc.stderr.read() if proc.stderr else b""
    return FatalError("Failed to initialize TLS tunnel for %s, please check mount.log for the failure reason." % fs_id,
                      log_message='Failed to start TLS tunnel (errno=%d), stderr="%s". If the stderr is lacking '
                      "enough details, please enable stunnel debug log in efs-utils config file and retry the "
                      "mount to capture more info." % (proc.returncode, err.strip()))


def _prepare(cfg: Config, paths: Paths, opts: Options, fs_id: str, mountpoint: str, target: Target,
             region: str, imds: IMDS, env: Mapping[str, str], name: str, port: int,
             ns: Optional[str]) -> dict:
    """_prepare writes the certificate, the stunnel config and the full temporary state file."""
    temp = state.TEMP_PREFIX + name
    mode = cfg.state_file_dir_mode()
    binary = paths.stunnel_binary()
    if not binary:
        raise FatalError("Failed to locate stunnel in %s. Please install stunnel (RPM stunnel)." %
                         "/sbin:/usr/sbin:/usr/local/sbin:/usr/local/bin:/usr/bin:/bin")
    caps = stunnel.capabilities(binary, paths.state_dir)
    creds, creds_source = _credentials(opts, region, imds, paths, env)
    key = certificate.private_key(paths.private_key, paths.lock_file)
    mount_dir_name = name + state.MOUNT_DIR_SUFFIX
    mount_dir = os.path.join(paths.state_dir, mount_dir_name)
    req = certificate.CertRequest(common_name=socket.gethostname()[:64], region=region, fs_id=fs_id,
                                  client_source=cfg.client_source(), version=VERSION,
                                  access_point=opts.get("accesspoint"), credentials=creds)
    created = certificate.write_mount_certificate(mount_dir, paths.private_key, key, req, dir_mode=mode)
    cert_path = os.path.join(mount_dir, "certificate.pem")
    relay_cfg = _relay_config(cfg, paths, opts, name, port, target, fs_id, region, cert_path)
    config_file = stunnel.write_config(relay_cfg, caps)
    cmd = stunnel.command(binary, config_file, ns)
    doc = {"pid": -1, "cmd": cmd, "files": [config_file], "mount_time": time.time(),
           "mountpoint": mountpoint, "mountStateDir": mount_dir_name,
           "commonName": req.common_name, "region": region, "certificateCreationTime": created,
           "certificate": cert_path, "privateKey": paths.private_key, "fsId": fs_id}
    if req.access_point:
        doc["accessPoint"] = req.access_point
    if creds_source:
        doc["awsCredentialsMethod"] = creds_source
    state.write(paths.state_dir, temp, doc)
    return doc


def _discard(state_dir: str, name: str) -> None:
    for path in (os.path.join(state_dir, state.TEMP_PREFIX + name),
                 os.path.join(state_dir, state.STUNNEL_CONFIG_PREFIX + name)):
        try:
            os.unlink(path)
        except OSError:
            pass
    shutil.rmtree(os.path.join(state_dir, name + state.MOUNT_DIR_SUFFIX), ignore_errors=True)


def _relay_config(cfg: Config, paths: Paths, opts: Options, name: str, port: int, target: Target,
                  fs_id: str, region: str, cert_path: str) -> stunnel.RelayConfig:
    ocsp = cfg.stunnel_check_cert_validity()
    if "ocsp" in opts:
        ocsp = True
    if "noocsp" in opts:
        ocsp = False
    log_file = None
    if cfg.stunnel_debug_enabled():
        log_file = (cfg.stunnel_logs_file() or os.path.join(paths.log_dir, "%s.stunnel.log" % name))
        log_file = log_file.replace("{fs_id}", fs_id)
    return stunnel.RelayConfig(
        mount_name=name, state_dir=paths.state_dir, port=port, connect_host=target.host,
        check_host=check_host_name(target.dns_name, fs_id) if cfg.stunnel_check_cert_hostname() else None,
        verify=verify_level(opts), cafile=opts.get("cafile") or cfg.stunnel_cafile(region),
        cert=cert_path, key=paths.private_key, ocsp=ocsp, fips=cfg.fips_mode_enabled(),
        debug=cfg.stunnel_debug_enabled(), log_file=log_file)


def monitor(relay: Relay, on_death: Callable[[], None], stop: threading.Event) -> threading.Thread:
    """monitor polls the relay every 0.5 s while mount.nfs4 runs and calls on_death if it exits."""
    def loop() -> None:
        while not stop.wait(MONITOR_INTERVAL):
            if relay.proc.poll() is not None:
                on_death()
                return
    t = threading.Thread(target=loop, name="stunnel-monitor", daemon=True)
    t.start()
    return t
