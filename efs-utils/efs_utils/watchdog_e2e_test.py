"""The real watchdog process supervising real stunnel relays (ours and 1.36-format fixtures)."""

import json
import os
import signal
import time

from . import stunnel
from .conftest import FS_ID, STUNNEL, in_kernel_mount_table, relay_roundtrip, wait_for


def _mount(node, mount_target, name="mnt"):
    mp = node.mountpoint(name)
    proc = node.mount(FS_ID, mp, "tls,mounttargetip=" + mount_target.ip)
    assert proc.returncode == 0, proc.stderr.decode()
    [(state_name, st)] = [(n, s) for n, s in node.states().items() if s["mountpoint"] == os.path.realpath(mp)]
    return mp, state_name, st


def _port(name):
    return int(name.rsplit(".", 1)[1])


def _passes(log_path):
    """_passes reads the watchdog log: the pass numbers in order, and the pass in which each restart happened."""
    passes, restarts = [], []
    if not os.path.exists(log_path):
        return passes, restarts
    with open(log_path) as f:
        for line in f:
            if "check pass " in line:
                passes.append(int(line.rsplit("check pass ", 1)[1]))
            elif "is not running; restarting it" in line and passes:
                restarts.append(passes[-1])
    return passes, restarts


def test_watchdog_restarts_killed_relay_within_two_polls(node, mount_target):
    """Counted in watchdog passes, not seconds: the relay is killed right after pass k starts; the
    restart must come from pass k, k+1 or k+2."""
    mp, name, st = _mount(node, mount_target)
    node.write_config({("mount-watchdog", "stunnel_health_check_enabled"): "false",
                       ("DEFAULT", "logging_level"): "DEBUG"})
    log_path = os.path.join(node.log_dir, "mount-watchdog.log")
    wd = node.watchdog()
    try:
        assert wait_for(lambda: len(_passes(log_path)[0]) >= 2, timeout=20), "watchdog is not polling"
        k = _passes(log_path)[0][-1]
        old_pid = st["pid"]
        os.killpg(old_pid, signal.SIGKILL)

        def restarted():
            cur = node.states()[name].get("pid")
            return cur if isinstance(cur, int) and cur != old_pid and stunnel.is_running(cur) else None

        new_pid = wait_for(restarted, timeout=30)
        assert new_pid, "watchdog did not restart the relay"
        _, restarts = _passes(log_path)
        assert restarts and k <= restarts[0] <= k + 2, "killed in pass %d, restarted in pass %s" % (k, restarts)
        assert wait_for(lambda: _roundtrip_ok(_port(name)), timeout=10)
    finally:
        wd.terminate()
        wd.wait(10)
    assert in_kernel_mount_table(mp)


def _roundtrip_ok(port):
    try:
        return relay_roundtrip(port) == b"hello\n"
    except OSError:
        return False


def test_watchdog_cleans_up_after_unmount(node, mount_target):
    mp, name, st = _mount(node, mount_target)
    node.write_config({("mount-watchdog", "unmount_grace_period_sec"): "0",
                       ("mount-watchdog", "unmount_count_for_consistency"): "1"})
    # pretend the mount is older than the 30 s grace that protects fresh mounts
    st["mount_time"] -= 60
    with open(os.path.join(node.state_dir, name), "w") as f:
        json.dump(st, f)
    node.unmount(mp)
    wd = node.watchdog()
    try:
        gone = wait_for(lambda: not os.path.exists(os.path.join(node.state_dir, name)), timeout=15)
    finally:
        wd.terminate()
        wd.wait(10)
    assert gone, "state file %s still there: %s" % (name, node.states())
    assert not stunnel.is_running(st["pid"])
    assert not os.path.exists(st["files"][0])
    assert not os.path.exists(os.path.join(node.state_dir, name + "+"))


def write_136_fixture(node, mount_target, mountpoint, port, pid=None):
    """write_136_fixture lays out one TLS mount as efs-utils 1.36 writes it (from the contract, not
    copied files): stunnel config, state JSON, <name>+/ with openssl ca database files."""
    dotted = os.path.realpath(mountpoint).replace("/", ".").lstrip(".")
    name = "%s.%s.%d" % (FS_ID, dotted, port)
    mount_dir = os.path.join(node.state_dir, name + "+")
    os.makedirs(os.path.join(mount_dir, "database"))
    os.makedirs(os.path.join(mount_dir, "certs"))
    for f, content in (("index.txt", ""), ("index.txt.attr", "unique_subject = no"), ("serial", "00"), (".rand", "")):
        with open(os.path.join(mount_dir, "database", f), "w") as fh:
            fh.write(content)
    # 1.36 made the certificate with openssl; any client certificate for the key will do for stunnel
    from . import certificate
    key = certificate.private_key(node.private_key, os.path.join(node.state_dir, "efs-utils-lock"))
    req = certificate.CertRequest(common_name="node-136", region="us-east-1", fs_id=FS_ID, client_source="k8s",
                                  version="1.36.0")
    created = certificate.write_mount_certificate(mount_dir, node.private_key, key, req)
    config = os.path.join(node.state_dir, "stunnel-config." + name)
    with open(config, "w") as f:
        f.write("fips = no\nforeground = quiet\nsocket = l:SO_REUSEADDR=yes\nsocket = a:SO_BINDTODEVICE=lo\n"
                "pid = %s/stunnel.pid\n\n[efs]\nclient = yes\naccept = 127.0.0.1:%d\nconnect = %s:2049\n"
                "sslVersion = TLSv1.2\nrenegotiation = no\nTIMEOUTbusy = 20\nTIMEOUTclose = 0\nTIMEOUTidle = 70\n"
                "delay = yes\nverify = 2\nCAfile = %s\ncert = %s/certificate.pem\nkey = %s\n"
                "checkHost = %s.efs.us-east-1.amazonaws.com\nlibwrap = no\n"
                % (mount_dir, port, mount_target.ip, node.ca_path, mount_dir, node.private_key, FS_ID))
    st = {"pid": pid if pid is not None else 999999, "cmd": ["/usr/bin/stunnel", config], "files": [config],
          "mount_time": time.time() - 3600, "mountpoint": os.path.realpath(mountpoint),
          "mountStateDir": name + "+", "commonName": "node-136", "region": "us-east-1",
          "certificateCreationTime": created, "certificate": os.path.join(mount_dir, "certificate.pem"),
          "privateKey": node.private_key, "fsId": FS_ID}
    with open(os.path.join(node.state_dir, name), "w") as f:
        json.dump(st, f)
    return name


def test_watchdog_adopts_136_state(node, mount_target):
    """A node upgraded from efs-utils 1.36: its relay died with the old pod; the mount is still in the
    kernel table. Our watchdog must drop the stale pid, restart stunnel from the 1.36 cmd and keep it."""
    mp = node.mountpoint("legacy")
    port = 20777
    name = write_136_fixture(node, mount_target, mp, port)
    with open(node.mounts_file, "a") as f:
        f.write("127.0.0.1:/ %s nfs4 rw,vers=4.1,port=%d,addr=127.0.0.1 0 0\n" % (os.path.realpath(mp), port))
    if not os.path.exists("/usr/bin/stunnel"):
        # 1.36 recorded the stunnel path of its image; ours may live elsewhere
        node.env["EFS_UTILS_STUNNEL"] = STUNNEL
    wd = node.watchdog()
    try:
        pid = wait_for(lambda: stunnel.is_running(node.states()[name].get("pid")) and node.states()[name]["pid"],
                       timeout=10)
        assert pid and pid != 999999
        assert wait_for(lambda: _roundtrip_ok(port), timeout=5)
    finally:
        wd.terminate()
        wd.wait(10)
    st = node.states()[name]
    assert st["cmd"] == ["/usr/bin/stunnel", os.path.join(node.state_dir, "stunnel-config." + name)]
    assert st.get("unmount_count", 0) == 0
