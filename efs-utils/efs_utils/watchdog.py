"""amazon-efs-mount-watchdog: the supervision loop over /var/run/efs (config re-read every poll)."""

import argparse
import logging
import os
import signal
import sys
import time
from typing import List, Mapping, Optional

from . import config, logs, mounttable, paths, state
from .errors import FatalError
from .imds import IMDS
from .supervise import Supervisor, stale_pid
from .version import VERSION

log = logging.getLogger("watchdog")


class Watchdog:
    """Watchdog runs check passes over the state dir."""

    def __init__(self, p: paths.Paths, env: Mapping[str, str]):
        self.paths = p
        self.env = env
        self.supervisor = Supervisor(p, env)
        self.cfg = None  # type: Optional[config.Config]
        self.passes = 0

    def reload(self) -> config.Config:
        """reload re-reads the config; on error the previous one stays in force."""
        try:
            self.cfg = config.load(self.paths.config_file, self.env)
        except FatalError as e:
            if self.cfg is None:
                raise
            log.error("%s; keeping the previous configuration", e.message)
        return self.cfg

    def startup(self) -> None:
        """startup drops pids that are no longer stunnel (e.g. after a pod restart) and removes a
        left-over private key lock."""
        for name, path in state.state_files(self.paths.state_dir):
            st = state.read(path)
            if st and stale_pid(st) is not None:
                log.info("state file %s: pid %s is not a running stunnel; dropping it", name, st["pid"])
                del st["pid"]
                state.write(self.paths.state_dir, name, st)
        try:
            os.unlink(self.paths.lock_file)
            log.info("removed the private key lock %s", self.paths.lock_file)
        except FileNotFoundError:
            pass

    def check(self, now: Optional[float] = None) -> None:
        """check is one pass over every state file."""
        cfg = self.reload()
        self.passes += 1
        log.debug("check pass %d", self.passes)
        now = time.time() if now is None else now
        mounts = mounttable.tls_mounts(mounttable.read(self.paths.proc_mounts))
        imds = IMDS(self.paths.imds_endpoint, cfg.disable_imds_token())
        for name, path in state.state_files(self.paths.state_dir):
            st = state.read(path)
            if st is None:
                continue
            try:
                self._check_one(name, st, cfg, mounts, now, imds)
            except Exception:  # one broken state file must not stop the others
                log.exception("checking %s failed", name)
        self.supervisor.reap()

    def _check_one(self, name, st, cfg, mounts, now, imds) -> None:
        if "unmount_time" in st:
            if now - float(st["unmount_time"]) >= cfg.unmount_grace_period_sec():
                self.supervisor.cleanup(name, st)
            return
        if state.key_of_state_file(name) in mounts:
            self.supervisor.mounted(name, st, cfg, now, imds)
        else:
            self.supervisor.mark_unmounted(name, st, cfg, now)

    def run(self, stop_after: Optional[int] = None) -> None:
        self.startup()
        passes = 0
        while stop_after is None or passes < stop_after:
            self.check()
            passes += 1
            cfg = self.cfg
            time.sleep(cfg.poll_interval_sec() if cfg else 1)


def main(argv: Optional[List[str]] = None) -> int:
    """main is the amazon-efs-mount-watchdog entry point."""
    parser = argparse.ArgumentParser(prog="amazon-efs-mount-watchdog",
                                     description="Supervises the stunnel relays of EFS TLS mounts.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_argument("--passes", type=int, default=None, help="stop after this many passes (testing)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.version:
        # 1.36 watchdog parse_arguments: "<argv[0]> Version: <version>"
        sys.stdout.write("%s Version: %s\n" % (sys.argv[0] if argv is None else "amazon-efs-mount-watchdog", VERSION))
        return 0
    p = paths.from_env(os.environ)
    try:
        cfg = config.load(p.config_file, os.environ)
        logs.setup(p.log_dir, "mount-watchdog.log", cfg.logging_level(), cfg.logging_max_bytes(),
                   cfg.logging_file_count(), stderr_level=logging.INFO)
        if not cfg.watchdog_enabled():
            log.info("amazon-efs-mount-watchdog is not enabled in %s", cfg.path)
            return 0
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        log.info("amazon-efs-mount-watchdog %s started, state dir %s", VERSION, p.state_dir)
        Watchdog(p, os.environ).run(args.passes)
    except FatalError as e:
        sys.stderr.write(e.message + "\n")
        return e.exit_code
    return 0
