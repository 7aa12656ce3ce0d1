"""Watchdog decisions on state files, one pass at a time (no real relay needed)."""

import json
import os
import subprocess
import sys
import time

from . import config, paths, state
from .conftest import DIST_CONF
from .watchdog import Watchdog


def _watchdog(tmp_path, conf_extra=None):
    text = open(DIST_CONF).read()
    for k, v in (conf_extra or {}).items():
        text = text.replace("%s = " % k, "%s = %s\n#" % (k, v), 1)
    cfg = tmp_path / "efs-utils.conf"
    cfg.write_text(text)
    (tmp_path / "state").mkdir()
    (tmp_path / "mounts").write_text("")
    p = paths.Paths(config_file=str(cfg), state_dir=str(tmp_path / "state"), proc_mounts=str(tmp_path / "mounts"),
                    imds_endpoint="http://127.0.0.1:9", private_key=str(tmp_path / "key.pem"), stunnel="/bin/false")
    return Watchdog(p, {}), p


def _write(p, name, st):
    state.write(p.state_dir, name, st)


def test_unmounted_state_is_counted_then_marked_then_cleaned(tmp_path):
    wd, p = _watchdog(tmp_path, {"unmount_grace_period_sec": "30"})
    name = "fs-abc.mnt.x.20100"
    cfgfile = os.path.join(p.state_dir, "stunnel-config." + name)
    open(cfgfile, "w").close()
    os.mkdir(os.path.join(p.state_dir, name + "+"))
    now = time.time()
    _write(p, name, {"pid": 999999, "files": [cfgfile], "mount_time": now - 100, "mountStateDir": name + "+"})
    for i in range(1, 6):
        wd.check(now)
        assert state.read(os.path.join(p.state_dir, name))["unmount_count"] == i
    wd.check(now)
    st = state.read(os.path.join(p.state_dir, name))
    assert st["unmount_count"] == 6 and st["unmount_time"] == now
    wd.check(now + 29)
    assert os.path.exists(os.path.join(p.state_dir, name))
    wd.check(now + 31)
    assert not os.path.exists(os.path.join(p.state_dir, name))
    assert not os.path.exists(cfgfile) and not os.path.exists(os.path.join(p.state_dir, name + "+"))


def test_fresh_mount_is_not_counted_as_unmounted(tmp_path):
    wd, p = _watchdog(tmp_path)
    _write(p, "fs-abc.mnt.20100", {"pid": 999999, "mount_time": time.time() - 5})
    wd.check()
    assert "unmount_count" not in state.read(os.path.join(p.state_dir, "fs-abc.mnt.20100"))


def test_startup_drops_stale_pids_and_lock(tmp_path):
    wd, p = _watchdog(tmp_path)
    _write(p, "fs-abc.mnt.20100", {"pid": os.getpid(), "mount_time": 1})  # alive, but not stunnel
    open(p.lock_file, "w").close()
    wd.startup()
    assert "pid" not in state.read(os.path.join(p.state_dir, "fs-abc.mnt.20100"))
    assert not os.path.exists(p.lock_file)


def test_hung_relay_is_killed_and_restarted(tmp_path):
    """Health check: df on the mount point times out -> SIGKILL the relay's group and restart it."""
    wd, p = _watchdog(tmp_path, {"stunnel_health_check_interval_min": "0",
                                 "stunnel_health_check_command_timeout_sec": "1"})
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "df").write_text("#!/bin/sh\nsleep 5\n")
    (bindir / "df").chmod(0o755)
    fake = bindir / "stunnel"  # a copy of sleep: its command name is "stunnel", like a relay's
    import shutil
    shutil.copy("/bin/sleep", str(fake))
    relay = subprocess.Popen([str(fake), "60"], start_new_session=True)
    mp = str(tmp_path / "mnt")
    name = state.mount_name("fs-abc", mp, 20100)
    _write(p, name, {"pid": relay.pid, "cmd": [str(fake), "60"], "mount_time": time.time() - 600,
                     "mountpoint": mp})
    (tmp_path / "mounts").write_text("127.0.0.1:/ %s nfs4 rw,port=20100 0 0\n" % mp)
    old_path = os.environ["PATH"]
    os.environ["PATH"] = "%s:%s" % (bindir, old_path)
    try:
        wd.check()
    finally:
        os.environ["PATH"] = old_path
    assert relay.wait(5) == -9
    st = state.read(os.path.join(p.state_dir, name))
    assert st["pid"] != relay.pid and st["last_stunnel_check_time"] > 0
    os.kill(st["pid"], 9)
    wd.supervisor.reap()


def test_config_is_reread_every_pass(tmp_path):
    wd, p = _watchdog(tmp_path, {"unmount_count_for_consistency": "5"})
    name = "fs-abc.mnt.20100"
    _write(p, name, {"pid": 999999, "mount_time": 1})
    wd.check()
    assert "unmount_time" not in state.read(os.path.join(p.state_dir, name))
    cfg = open(p.config_file).read().replace("unmount_count_for_consistency = 5", "unmount_count_for_consistency = 0")
    open(p.config_file, "w").write(cfg)
    wd.check()
    assert "unmount_time" in state.read(os.path.join(p.state_dir, name))
