"""End to end: mount.efs -> real stunnel client relay -> stunnel TLS server (test CA) -> echo
"NFS server"; mount.nfs4 replaced by the recorder, which probes the relay and bind-mounts."""

import os
import signal
import subprocess

import pytest
from cryptography import x509

from .certificate import OID_CLIENT_INFO, OID_FS_ID
from .conftest import DNS_NAME, FS_ID, in_kernel_mount_table, relay_roundtrip


def _tls_mount(node, mount_target, options="tls", mountpoint=None, **kw):
    mp = mountpoint or node.mountpoint()
    proc = node.mount(FS_ID + ":/", mp, options + ",mounttargetip=" + mount_target.ip, **kw)
    return mp, proc


def test_tls_mount_end_to_end(node, mount_target):
    mp, proc = _tls_mount(node, mount_target, "tls,rw")
    assert proc.returncode == 0, proc.stderr.decode()
    [rec] = node.records()
    opts = rec["options"].split(",")
    port = int([o for o in opts if o.startswith("port=")][0].split("=")[1])
    assert rec["source"] == "127.0.0.1:/"
    assert opts == ["rw", "nfsvers=4.1", "rsize=1048576", "wsize=1048576", "hard", "timeo=600", "retrans=2",
                    "noresvport", "port=%d" % port]
    assert 20049 <= port < 21049
    [(name, st)] = node.states().items()
    assert name == "%s.%s.%d" % (FS_ID, os.path.realpath(mp).replace("/", ".").lstrip("."), port)
    assert st["pid"] > 0 and st["fsId"] == FS_ID and st["region"] == "us-east-1"
    assert st["cmd"][1] == os.path.join(node.state_dir, "stunnel-config." + name)
    assert st["files"] == [st["cmd"][1]]
    assert st["mountStateDir"] == name + "+"
    # exactly the documented 1.36 field set (watchdog fields come later)
    assert set(st) == {"pid", "cmd", "files", "mount_time", "mountpoint", "mountStateDir", "commonName", "region",
                       "certificateCreationTime", "certificate", "privateKey", "fsId"}
    with open(st["cmd"][1]) as f:
        conf = f.read()
    assert "checkHost = %s" % DNS_NAME in conf
    assert "connect = %s:2049" % mount_target.ip in conf
    # the relay is live after mount.efs exits, and the bind mount is in place
    assert relay_roundtrip(port) == b"hello\n"
    assert in_kernel_mount_table(mp)
    with open(st["certificate"], "rb") as f:
        cert = x509.load_pem_x509_certificate(f.read())
    assert cert.extensions.get_extension_for_oid(x509.ObjectIdentifier(OID_FS_ID)).value.value[2:] == FS_ID.encode()
    assert cert.extensions.get_extension_for_oid(x509.ObjectIdentifier(OID_CLIENT_INFO))
    assert not os.path.exists(os.path.join(node.state_dir, "~" + name))


def test_wrong_host_name_is_refused(node, mount_target, test_ca, tmp_path):
    # the mount target presents a certificate for another file system: checkHost fails
    from .conftest import MountTarget
    other = MountTarget(str(tmp_path / "other"), test_ca, ["fs-99999999.efs.us-east-1.amazonaws.com"])
    try:
        mp = node.mountpoint()
        proc = node.mount(FS_ID, mp, "tls,mounttargetip=" + other.ip)
    finally:
        other.close()
    assert proc.returncode == 32, proc.stderr.decode()
    assert b"reset by peer" in proc.stderr
    assert not in_kernel_mount_table(mp)
    # the state file is renamed even though the mount failed (as 1.36 does)
    assert len(node.states()) == 1


def test_non_tls_mount(node, mount_target):
    mp = node.mountpoint()
    proc = node.mount(FS_ID + ":/data", mp, "mounttargetip=%s,nfsvers=4.0,soft" % mount_target.ip,
                      env={"RECORDER_PROBE": ""})
    assert proc.returncode == 0, proc.stderr.decode()
    [rec] = node.records()
    assert rec["source"] == "%s:/data" % mount_target.ip
    assert rec["options"] == "nfsvers=4.0,soft,rsize=1048576,wsize=1048576,timeo=600,retrans=2,noresvport"
    assert node.states() == {}
    assert in_kernel_mount_table(mp)


def test_already_mounted(node, mount_target):
    mp, proc = _tls_mount(node, mount_target)
    assert proc.returncode == 0, proc.stderr.decode()
    _, again = _tls_mount(node, mount_target, mountpoint=mp)
    assert again.returncode == 0
    assert b"already mounted" in again.stdout
    assert len(node.records()) == 1 and len(node.states()) == 1


def test_mount_nfs4_exit_code_is_returned(node, mount_target):
    mp, proc = _tls_mount(node, mount_target, env={"RECORDER_FAIL": "32"})
    assert proc.returncode == 32
    # 1.36 mount_nfs: fatal_error(err.strip(), ...) with err the bytes of mount.nfs4's stderr, which Python 3
    # prints as b'...': the text users paste and the driver's events show
    assert proc.stderr == b"b'mount.nfs4: access denied by server'\n"
    with open(os.path.join(node.log_dir, "mount.log")) as f:
        log = f.read()
    assert ('Failed to mount %s at %s: returncode=32, stderr="b\'mount.nfs4: access denied by server\'"'
            % (DNS_NAME, mp)) in log


def test_tlsport_busy(node, mount_target):
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    try:
        _, proc = _tls_mount(node, mount_target, "tls,tlsport=%d" % port)
    finally:
        s.close()
    assert proc.returncode == 1
    assert b"Specified port [%d] is unavailable" % port in proc.stderr


def test_access_point_and_verify_options(node, mount_target):
    mp, proc = _tls_mount(node, mount_target, "tls,accesspoint=fsap-0123456789abcdef0,noocsp")
    assert proc.returncode == 0, proc.stderr.decode()
    [st] = node.states().values()
    assert st["accessPoint"] == "fsap-0123456789abcdef0"
    with open(st["files"][0]) as f:
        conf = f.read()
    assert "verify = 2" in conf and "OCSPaia" not in conf


def test_stunnel_dies_during_mount(node, mount_target, tmp_path):
    # a recorder that kills the relay and then hangs: the monitor must end mount.efs
    script = tmp_path / "killer.sh"
    script.write_text("#!/bin/sh\nfor d in %s/*+; do kill -9 $(cat $d/stunnel.pid); done\nsleep 30\n" % node.state_dir)
    script.chmod(0o755)
    _, proc = _tls_mount(node, mount_target, env={"EFS_UTILS_MOUNT_NFS4": str(script)}, timeout=25)
    assert proc.returncode == 1
    # 1.36 test_tunnel_process (called by poll_tunnel_process): the user is sent to mount.log ...
    # (the last line: under load the first kill can come before stunnel wrote its pid file, and the attempt is
    # retried after its timeout with 1.36's "Mount attempt 1/3 failed ..." line)
    assert proc.stderr.splitlines()[-1] == (b"Failed to initialize TLS tunnel for %s, please check mount.log for the "
                                            b"failure reason." % FS_ID.encode())
    # ... which has stunnel's exit code and stderr
    with open(os.path.join(node.log_dir, "mount.log")) as f:
        assert "Failed to start TLS tunnel (errno=-9)" in f.read()


def test_failure_before_the_relay_starts_leaves_no_state(node, mount_target):
    # no CA file: the stunnel config cannot be written, nothing is started
    node.write_config({("mount", "stunnel_cafile"): "/nonexistent/ca.pem"})
    _, proc = _tls_mount(node, mount_target)
    assert proc.returncode == 1
    assert b"Failed to find certificate authority file for verification" in proc.stderr
    leftovers = [e for e in os.listdir(node.state_dir) if e != "stunnel-capabilities.json"]
    assert leftovers == [] and node.records() == []


def test_tls_mount_through_the_dns_name(node, mount_target, tmp_path):
    """No mounttargetip: mount.efs resolves the file system's DNS name and stunnel connects to the name.
    /etc/hosts is replaced only inside a private mount namespace of this one mount.efs run."""
    import shutil
    if not shutil.which("unshare"):
        import pytest
        pytest.skip("needs unshare: apt-get install util-linux")
    hosts = tmp_path / "hosts"
    hosts.write_text("127.0.0.1 localhost\n%s %s\n" % (mount_target.ip, DNS_NAME))
    mp = node.mountpoint()
    wrapper = tmp_path / "in-namespace.sh"
    wrapper.write_text('#!/bin/sh\nmount --bind "%s" /etc/hosts && exec "$@"\n' % hosts)
    wrapper.chmod(0o755)
    from .conftest import MOUNT_EFS
    proc = subprocess.run(["unshare", "--mount", "--propagation", "private", str(wrapper), MOUNT_EFS, FS_ID, mp,
                           "-o", "tls"], env=node.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    [rec] = node.records()  # the recorder sent a line through the relay to the name and got it back
    [st] = node.states().values()
    with open(st["files"][0]) as f:
        conf = f.read()
    assert "connect = %s:2049" % DNS_NAME in conf and "checkHost = %s" % DNS_NAME in conf
