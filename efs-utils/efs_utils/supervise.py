"""What the watchdog does to one mount's relay: restart, health check, certificate renewal, cleanup.

Works on state files written by efs-utils 1.36 or by this package (the same JSON fields).
"""

import logging
import os
import shutil
import signal
import subprocess
from datetime import datetime, timezone
from typing import Any, Dict, List, Mapping, Optional

from . import certificate, credentials, proxystate, state, stunnel
from .config import Config
from .errors import FatalError
from .imds import IMDS
from .paths import Paths
from .version import VERSION

State = Dict[str, Any]
MOUNT_GRACE_SEC = 30

log = logging.getLogger(__name__)


class Supervisor:
    """Supervisor acts on state files; it keeps the children it started so the loop can reap them."""

    def __init__(self, paths: Paths, env: Mapping[str, str]):
        self.paths = paths
        self.env = env
        self.children = []  # type: List[subprocess.Popen]

    # -- process helpers -------------------------------------------------------------------

    def _pid_file_matches(self, st: State, pid: int) -> bool:
        pid_file = os.path.join(self.paths.state_dir, st.get("mountStateDir") or "", "stunnel.pid")
        try:
            with open(pid_file) as f:
                return int(f.read().strip()) == pid
        except (OSError, ValueError):
            return True  # no pid file (yet): the process check alone decides

    def reap(self) -> None:
        """reap collects exited children (check_child_procs)."""
        self.children = [c for c in self.children if c.poll() is None]

    def _fix_command(self, cmd: List[str]) -> List[str]:
        """_fix_command swaps a stunnel path that no longer exists (e.g. AL2 stunnel5) for ours and
        drops libwrap from the config when our stunnel rejects it."""
        cmd = list(cmd)
        binary = self.paths.stunnel_binary()
        idx = next((i for i, a in enumerate(cmd) if os.path.basename(a).startswith("stunnel")), None)
        if idx is not None and binary and not os.path.exists(cmd[idx]):
            log.warning("stunnel %s is gone; restarting with %s", cmd[idx], binary)
            cmd[idx] = binary
        if idx is not None and binary and idx + 1 < len(cmd):
            _drop_libwrap(cmd[idx + 1], binary, self.paths.state_dir)
        return cmd

    def _relay_command(self, name: str, st: State) -> List[str]:
        """_relay_command is the command that serves the mount of st: its own cmd (stunnel path fixed), or, for a
        mount made by efs-utils 2.x/3.x whose efs-proxy is not installed here, a relay of ours for the same port,
        mount target and certificate (proxystate). The state file's cmd is never rewritten."""
        cmd = list(st.get("cmd") or [])
        idx = proxystate.proxy_index(cmd)
        if idx is None:
            return self._fix_command(cmd)
        if os.path.exists(cmd[idx]):
            return cmd
        try:
            relay = proxystate.relay_command(name, st, self.paths)
        except (FatalError, OSError) as e:
            log.error("cannot serve the efs-proxy mount of %s: %s", name, getattr(e, "message", e))
            return []
        log.info("efs-proxy is not installed; serving %s with %s", name, " ".join(relay))
        return relay

    def start(self, name: str, st: State) -> None:
        """start runs the state file's cmd again (in a new session) and records the new pid."""
        cmd = self._relay_command(name, st)
        if not cmd:
            log.error("state file %s has no command to restart its TLS tunnel", name)
            return
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    stdin=subprocess.DEVNULL, start_new_session=True, close_fds=True)
        except OSError as e:
            log.error("cannot restart TLS tunnel of %s (%s): %s", name, " ".join(cmd), e)
            return
        self.children.append(proc)
        st["pid"] = proc.pid
        state.write(self.paths.state_dir, name, st)
        log.info("started TLS tunnel of %s, pid %d", name, proc.pid)

    def stop(self, st: State, sig: int = signal.SIGTERM) -> None:
        pid = st.get("pid")
        if isinstance(pid, int) and stunnel.is_running(pid) and self._pid_file_matches(st, pid):
            try:
                os.killpg(pid, sig)
            except OSError:
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass

    # -- actions ---------------------------------------------------------------------------

    def cleanup(self, name: str, st: State) -> bool:
        """cleanup stops the relay of an unmounted state; once it is gone it deletes the config,
        the state file and <name>+/. It returns True when everything is deleted."""
        pid = st.get("pid")
        if isinstance(pid, int) and stunnel.is_running(pid) and self._pid_file_matches(st, pid):
            log.info("unmount grace period over for %s: stopping stunnel pid %d", name, pid)
            self.stop(st)
            self.reap()
            if stunnel.is_running(pid):
                return False
        for f in st.get("files") or []:
            _remove(f)
        # non-TLS efs-proxy mounts have no mountStateDir, but our relay keeps its pid file in <name>+/
        mount_dir = st.get("mountStateDir") or name + state.MOUNT_DIR_SUFFIX
        if mount_dir:
            shutil.rmtree(os.path.join(self.paths.state_dir, mount_dir), ignore_errors=True)
        # the state file goes last: if we are stopped half way, the next pass finishes the job
        _remove(os.path.join(self.paths.state_dir, name))
        log.info("cleaned up state of %s", name)
        return True

    def mark_unmounted(self, name: str, st: State, cfg: Config, now: float) -> None:
        if now - float(st.get("mount_time") or 0) <= MOUNT_GRACE_SEC:
            return
        st["unmount_count"] = int(st.get("unmount_count", 0)) + 1
        if st["unmount_count"] > cfg.unmount_count_for_consistency():
            st["unmount_time"] = now
            log.info("%s is unmounted; cleaning up after %ds", name, cfg.unmount_grace_period_sec())
        state.write(self.paths.state_dir, name, st)

    def mounted(self, name: str, st: State, cfg: Config, now: float, imds: IMDS) -> None:
        """mounted keeps a mounted relay healthy: renew its certificate, health-check, restart."""
        changed = False
        if st.get("unmount_count"):
            st["unmount_count"] = 0
            changed = True
        if self.renew_certificate_if_due(name, st, cfg, now, imds):
            changed = True
        pid = st.get("pid")
        running = isinstance(pid, int) and stunnel.is_running(pid)
        if running and self._health_check_due(st, cfg, now):
            st["last_stunnel_check_time"] = now
            changed = True
            if not self._df_ok(st, cfg):
                log.warning("TLS tunnel of %s is hung (df timed out): killing pid %s", name, pid)
                self.stop(st, signal.SIGKILL)
                running = False
        if changed:
            state.write(self.paths.state_dir, name, st)
        if not running:
            log.warning("TLS tunnel of %s (pid %s) is not running; restarting it", name, pid)
            self.start(name, st)

    def _health_check_due(self, st: State, cfg: Config, now: float) -> bool:
        enabled, interval_min, _ = cfg.stunnel_health_check()
        if not enabled:
            return False
        last = max(float(st.get("mount_time") or 0), float(st.get("last_stunnel_check_time") or 0))
        return now - last >= interval_min * 60

    def _df_ok(self, st: State, cfg: Config) -> bool:
        _, _, timeout = cfg.stunnel_health_check()
        try:
            subprocess.run(["df", st.get("mountpoint") or "/"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False
        except OSError as e:
            log.warning("health check could not run df: %s", e)
            return True

    def renew_certificate_if_due(self, name: str, st: State, cfg: Config, now: float, imds: IMDS) -> bool:
        """renew_certificate_if_due rebuilds an old or missing certificate and SIGHUPs stunnel."""
        cert_path = st.get("certificate")
        if not cert_path:
            return False
        try:
            created = certificate.parse_creation_time(st.get("certificateCreationTime") or "")
            age_min = (now - created.timestamp()) / 60
        except ValueError:
            age_min = float("inf")
        if os.path.exists(cert_path) and age_min < cfg.tls_cert_renewal_interval_min():
            return False
        try:
            self._renew(st, cfg, now, imds)
        except (FatalError, OSError, ValueError) as e:
            log.error("cannot renew the certificate of %s: %s", name, getattr(e, "message", e))
            return False
        pid = st.get("pid")
        if isinstance(pid, int) and stunnel.is_running(pid):
            try:
                os.kill(pid, signal.SIGHUP)
            except OSError:
                pass
        log.info("renewed the certificate of %s", name)
        return True

    def _renew(self, st: State, cfg: Config, now: float, imds: IMDS) -> None:
        region = st.get("region") or ""
        creds = None
        method = st.get("awsCredentialsMethod")
        if method:
            creds = credentials.refetch(method, region, imds, self.paths.ecs_endpoint, self.env)
        key_path = st.get("privateKey") or self.paths.private_key
        key = certificate.private_key(key_path, self.paths.lock_file)
        req = certificate.CertRequest(common_name=st.get("commonName") or "", region=region,
                                      fs_id=st.get("fsId") or "", client_source=cfg.client_source(),
                                      version=VERSION, access_point=st.get("accessPoint"), credentials=creds)
        mount_dir = os.path.dirname(st["certificate"])
        when = datetime.fromtimestamp(int(now), timezone.utc)
        st["certificateCreationTime"] = certificate.write_mount_certificate(
            mount_dir, key_path, key, req, now=when, dir_mode=cfg.state_file_dir_mode())


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as e:
        log.warning("cannot remove %s: %s", path, e)


def _drop_libwrap(config_file: str, binary: str, cache_dir: str) -> None:
    try:
        with open(config_file) as f:
            lines = f.read().splitlines(True)
    except OSError:
        return
    if not any(l.strip().startswith("libwrap") for l in lines):
        return
    if stunnel.capabilities(binary, cache_dir).libwrap:
        return
    with open(config_file, "w") as f:
        f.writelines(l for l in lines if not l.strip().startswith("libwrap"))


def stale_pid(st: State) -> Optional[int]:
    """stale_pid is the recorded pid when it is no longer a running stunnel."""
    pid = st.get("pid")
    if isinstance(pid, int) and pid > 0 and not stunnel.is_running(pid):
        return pid
    return None
