import os
import subprocess

import pytest

from . import mounttable, ports, state
from .errors import FatalError


def test_names():
    assert state.mount_name("fs-abc", "/var/lib/kubelet/pods/x/mount", 20100) == \
        "fs-abc.var.lib.kubelet.pods.x.mount.20100"
    assert state.mount_key("/mnt/a", 20100) == "mnt.a.20100"
    assert state.key_of_state_file("fs-abc.mnt.a.20100") == "mnt.a.20100"


def test_write_finish_list_and_ports(tmp_path):
    d = str(tmp_path)
    state.write(d, "~fs-abc.mnt.20100", {"pid": -1})
    assert state.ports_in_use(d) == {20100}
    assert list(state.state_files(d)) == []  # ~ files are not supervised yet
    state.finish(d, "fs-abc.mnt.20100")
    os.mkdir(os.path.join(d, "fs-abc.mnt.20100+"))
    (tmp_path / "stunnel-config.fs-abc.mnt.20100").write_text("")
    (tmp_path / "stunnel-capabilities.json").write_text("{}")
    assert [n for n, _ in state.state_files(d)] == ["fs-abc.mnt.20100"]
    assert state.read(os.path.join(d, "fs-abc.mnt.20100")) == {"pid": -1}
    assert state.ports_in_use(d) == {20100}


def test_port_choice_skips_state_and_bound_ports(tmp_path):
    d = str(tmp_path)
    import socket
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    p = busy.getsockname()[1]
    try:
        (tmp_path / ("fs-x.m.%d" % (p + 1))).write_text("{}")
        with pytest.raises(FatalError, match=r"Failed to locate an available port in the range \[%d, %d\]" % (p, p + 2)):
            ports.choose(d, p, p + 2, config_path="c.conf")
    finally:
        busy.close()
    port, sock = ports.choose(d, p, p + 1)
    sock.close()
    assert port == p


def test_mounttable_parse():
    text = ("127.0.0.1:/ /var/lib/kubelet/pods/a\\040b/mount nfs4 rw,vers=4.1,port=20100,addr=127.0.0.1 0 0\n"
            "10.0.0.1:/ /mnt/plain nfs4 rw,vers=4.1,addr=10.0.0.1 0 0\n"
            "127.0.0.1:/x /mnt/noport nfs4 rw 0 0\n"
            "tmpfs /tmp tmpfs rw 0 0\n")
    ms = mounttable.parse(text)
    assert ms[0].mountpoint == "/var/lib/kubelet/pods/a b/mount"
    assert sorted(mounttable.tls_mounts(ms)) == ["mnt.noport.2049", "var.lib.kubelet.pods.a b.mount.20100"]
    assert mounttable.is_nfs_mounted(ms, "/mnt/plain") and not mounttable.is_nfs_mounted(ms, "/tmp")


def test_mounttable_reads_the_real_kernel_table(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root for mount --bind; CI runs as root")
    src, dst = tmp_path / "src", tmp_path / "dir with space"
    src.mkdir()
    dst.mkdir()
    subprocess.run(["mount", "--bind", str(src), str(dst)], check=True)
    try:
        found = [m for m in mounttable.read("/proc/self/mounts") if m.mountpoint == str(dst)]
        assert len(found) == 1 and found[0].fstype != "nfs4"
    finally:
        subprocess.run(["umount", str(dst)], check=True)


def test_tlsport_zero_lets_the_kernel_pick_as_136_does(tmp_path):
    # 1.36 binds ("localhost", 0) for tlsport=0 and uses the port the kernel gave (getsockname)
    port, sock = ports.choose(str(tmp_path), 20049, 21049, tlsport=0)
    try:
        assert port > 0 and sock.getsockname()[1] == port
    finally:
        sock.close()
