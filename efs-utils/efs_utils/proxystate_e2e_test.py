"""Mounts made by efs-utils 2.x/3.x (relay: efs-proxy) taken over by our watchdog, with real stunnel and a real
mount target stand-in. The fixtures are written from the facts in proxystate.py (aws/efs-utils v2.4.1 2341e82d and
v3.2.0 def6e74f), not copied from efs-utils."""

import json
import os
import signal
import threading
import time

import pytest

from . import certificate, proxystate, stunnel
from .conftest import FS_ID, EchoServer, _Echo, free_loopback_ip, need_root_and_stunnel, relay_roundtrip, wait_for
from .paths import Paths


def _roundtrip_ok(port):
    try:
        return relay_roundtrip(port) == b"hello\n"
    except OSError:
        return False


def write_proxy_fixture(node, mountpoint, port, target_ip, tls, version=3, netns=None):
    """write_proxy_fixture lays out one mount as efs-utils 2.x/3.x writes it for efs-proxy: the stunnel-format
    configuration (3.x with its efs-proxy-only keys), the state file with efs-proxy's command and a dead pid."""
    dotted = os.path.realpath(mountpoint).replace("/", ".").lstrip(".")
    name = "%s.%s.%d" % (FS_ID, dotted, port)
    mount_dir = os.path.join(node.state_dir, name + "+")
    config = os.path.join(node.state_dir, "stunnel-config." + name)
    lines = ["fips = no", "foreground = yes", "socket = l:SO_REUSEADDR=yes", "socket = a:SO_BINDTODEVICE=lo",
             "pid = %s/stunnel.pid" % mount_dir, "[efs]", "client = yes", "accept = 127.0.0.1:%d" % port,
             "connect = %s:2049" % target_ip, "sslVersion = TLSv1.2", "renegotiation = no", "TIMEOUTbusy = 20",
             "TIMEOUTclose = 0", "TIMEOUTidle = 70", "delay = yes"]
    st = {"pid": 999999, "files": [config], "mount_time": time.time() - 3600,
          "mountpoint": os.path.realpath(mountpoint)}
    cmd = ["/usr/bin/efs-proxy", config]
    if tls:
        os.makedirs(mount_dir)
        key = certificate.private_key(node.private_key, os.path.join(node.state_dir, "efs-utils-lock"))
        req = certificate.CertRequest(common_name="node-2x", region="us-east-1", fs_id=FS_ID, client_source="k8s",
                                      version="2.4.1")
        created = certificate.write_mount_certificate(mount_dir, node.private_key, key, req)
        lines += ["verify = 2", "CAfile = %s" % node.ca_path, "cert = %s/certificate.pem" % mount_dir,
                  "key = %s" % node.private_key, "checkHost = %s.efs.us-east-1.amazonaws.com" % FS_ID]
        st.update({"mountStateDir": name + "+", "commonName": "node-2x", "region": "us-east-1",
                   "certificateCreationTime": created, "certificate": os.path.join(mount_dir, "certificate.pem"),
                   "privateKey": node.private_key, "fsId": FS_ID})
        cmd.append("--tls")
    if version >= 3:
        lines += ["retry_nfs_mount_command_timeout_sec = 15", "proxy_logging_level = INFO", "fs_id = %s" % FS_ID,
                  "region = us-east-1", "efs_utils_version = 3.2.0"]
        cmd.append("--no-direct-s3-read")
        st["service_type"] = "efs"
    if netns:
        cmd = ["nsenter", "--net=" + netns] + cmd
    st["cmd"] = cmd
    with open(config, "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(node.state_dir, name), "w") as f:
        json.dump(st, f)
    with open(node.mounts_file, "a") as f:
        f.write("127.0.0.1:/ %s nfs4 rw,vers=4.1,port=%d,addr=127.0.0.1 0 0\n" % (os.path.realpath(mountpoint), port))
    return name, st


@pytest.fixture
def plain_target():
    """A mount target for non-TLS mounts: plain TCP on <ip>:2049 (an echo server)."""
    need_root_and_stunnel()
    srv = EchoServer((free_loopback_ip(), 2049), _Echo)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv.server_address[0]
    srv.shutdown()
    srv.server_close()


def _relay_pid(node, name, old):
    pid = node.states()[name].get("pid")
    return pid if isinstance(pid, int) and pid != old and stunnel.is_running(pid) else None


@pytest.mark.e2e
@pytest.mark.parametrize("version", [2, 3])
def test_watchdog_serves_efs_proxy_tls_mount(node, mount_target, version):
    """A TLS mount of efs-utils 2.x/3.x whose efs-proxy died with the upstream driver's pod: our watchdog serves the
    same local port with stunnel, through the same mount target with the same certificate and CA, and the state
    file keeps efs-proxy's command for a switch back."""
    mp = node.mountpoint("proxy-tls")
    port = 20888 + version
    name, st = write_proxy_fixture(node, mp, port, mount_target.ip, tls=True, version=version)
    wd = node.watchdog()
    try:
        pid = wait_for(lambda: _relay_pid(node, name, 999999), timeout=15)
        assert pid, "no relay for %s: %s" % (name, open(os.path.join(node.dir, "watchdog.stderr")).read())
        assert wait_for(lambda: _roundtrip_ok(port), timeout=10), "no TLS round trip through port %d" % port
        conf = open(os.path.join(node.state_dir, name + "+", proxystate.RELAY_CONFIG)).read()
        for want in ("accept = 127.0.0.1:%d" % port, "connect = %s:2049" % mount_target.ip, "CAfile = " + node.ca_path,
                     "cert = " + st["certificate"], "key = " + node.private_key, "verify = 2",
                     "checkHost = %s.efs.us-east-1.amazonaws.com" % FS_ID):
            assert want + "\n" in conf, "relay config lacks %r:\n%s" % (want, conf)
        # killed again: restarted again
        os.killpg(pid, signal.SIGKILL)
        assert wait_for(lambda: _relay_pid(node, name, pid), timeout=15), "relay not restarted after a kill"
        assert wait_for(lambda: _roundtrip_ok(port), timeout=10)
    finally:
        wd.terminate()
        wd.wait(10)
    assert node.states()[name]["cmd"] == st["cmd"], "the state file's efs-proxy command must stay"


@pytest.mark.e2e
@pytest.mark.parametrize("version", [2, 3])
def test_watchdog_serves_efs_proxy_plain_mount(node, plain_target, version):
    """A non-TLS mount of efs-utils 2.x/3.x also went through efs-proxy's local port: our watchdog relays that port
    to the mount target in plain TCP (stunnel cannot), and cleans up after an unmount."""
    mp = node.mountpoint("proxy-plain")
    port = 20898 + version
    name, st = write_proxy_fixture(node, mp, port, plain_target, tls=False, version=version)
    node.write_config({("mount-watchdog", "unmount_grace_period_sec"): "0",
                       ("mount-watchdog", "unmount_count_for_consistency"): "1"})
    wd = node.watchdog()
    try:
        pid = wait_for(lambda: _relay_pid(node, name, 999999), timeout=15)
        assert pid, "no relay for %s: %s" % (name, open(os.path.join(node.dir, "watchdog.stderr")).read())
        assert stunnel.process_info(pid)["comm"] == "efs-relay"
        assert wait_for(lambda: _roundtrip_ok(port), timeout=10), "no plain round trip through port %d" % port
        with open(os.path.join(node.state_dir, name + "+", "stunnel.pid")) as f:
            assert int(f.read()) == pid
        node.unmount(mp)
        assert wait_for(lambda: name not in node.states(), timeout=15), "state not cleaned up after unmount"
        assert wait_for(lambda: not stunnel.is_running(pid), timeout=5)
        assert not os.path.exists(os.path.join(node.state_dir, name + "+"))
    finally:
        wd.terminate()
        wd.wait(10)


def test_relay_command_refuses_what_it_cannot_serve(tmp_path):
    p = Paths(state_dir=str(tmp_path))
    conf = tmp_path / "stunnel-config.x"
    conf.write_text("pid = %s/x+/stunnel.pid\n[efs]\naccept = 127.0.0.1:20100\nconnect = 10.0.0.1:2049\n" % tmp_path)
    st = {"cmd": ["/usr/bin/efs-proxy", str(conf)], "service_type": "s3files"}
    with pytest.raises(Exception, match="s3files mounts are not supported"):
        proxystate.relay_command("x", st, p)
    st = {"cmd": ["nsenter", "--net=/proc/1/ns/net", "/usr/bin/efs-proxy", str(conf), "--no-direct-s3-read"]}
    cmd = proxystate.relay_command("x", st, p, python="/usr/bin/python3")
    assert cmd[:4] == ["nsenter", "--net=/proc/1/ns/net", "/usr/bin/python3", proxystate.PLAIN_RELAY]
    assert cmd[4:] == ["--accept", "127.0.0.1:20100", "--connect", "10.0.0.1:2049", "--pid-file",
                       "%s/x+/stunnel.pid" % tmp_path]
    conf.write_text("[efs]\naccept = nowhere\n")
    with pytest.raises(Exception, match="accept"):
        proxystate.relay_command("x", {"cmd": ["/usr/bin/efs-proxy", str(conf)]}, p)
    assert proxystate.proxy_index(["/usr/bin/stunnel", "/var/run/efs/stunnel-config.x"]) is None
