"""What users see from mount.efs, run as mount(8) runs it: the messages, exit codes and files of efs-utils 1.36.

Each expected text is 1.36's, word for word, with the 1.36 function (src/mount_efs/__init__.py of efs-utils
v1.36.0) that produces it named beside it. Where 1.36 stops with a Python traceback we keep our own message.
"""

import os
import stat
import subprocess
import sys

import pytest

from .conftest import FS_ID, MOUNT_EFS, free_loopback_ip, in_kernel_mount_table
from .paths import STUNNEL_SEARCH_PATH

USAGE = b"Usage: mount.efs [--version] [-h|--help] <fsname> <mountpoint> [-o <options>]\n"


@pytest.fixture
def root():
    if os.geteuid() != 0:
        pytest.skip("needs root (mount.efs refuses to run otherwise); CI runs as root")


def _run(node, argv, env=None):
    e = dict(node.env)
    e.update(env or {})
    return subprocess.run([MOUNT_EFS] + argv, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)


def test_version_and_help(node):
    # parse_arguments_early_exit: argv[0] as invoked; usage() on stdout for help; both before the root check
    proc = _run(node, ["--version"])
    assert (proc.returncode, proc.stdout) == (0, b"%s Version: 1.36.0\n" % MOUNT_EFS.encode())
    proc = _run(node, ["fs-1", "/mnt", "-h"])
    assert (proc.returncode, proc.stdout) == (0, USAGE)


@pytest.mark.parametrize("argv", [[], ["fs-0123456789abcdef0"], ["", "/mnt"]])
def test_missing_arguments_print_usage(node, root, argv):
    # parse_arguments -> usage(out=sys.stderr): exit 1
    proc = _run(node, argv)
    assert (proc.returncode, proc.stderr) == (1, USAGE)


@pytest.mark.parametrize("options,message", [
    # check_options_validity
    ("tls,accesspoint=fsap-12", b"Access Point ID fsap-12 is malformed\n"),
    ("tls,tlsport=x1", b"tlsport option [x1] is not an integer\n"),
    ("tls,iam,awscredsuri=v2/creds", b"awscredsuri v2/creds is malformed\n"),
])
def test_bad_options(node, root, options, message):
    proc = _run(node, [FS_ID, node.mountpoint(), "-o", options])
    assert (proc.returncode, proc.stderr) == (1, message)
    with open(os.path.join(node.log_dir, "mount.log")) as f:
        assert message.decode().strip() in f.read()  # fatal_error logs the same text


def test_malformed_file_system_id(node, root):
    # match_device: not fs-<hex>, so resolved as a DNS name
    proc = _run(node, ["fs-12345xyz:/", node.mountpoint(), "-o", "tls"])
    assert proc.returncode == 1
    assert proc.stderr == (b'Failed to resolve "fs-12345xyz" - check that the specified DNS name is a CNAME record '
                           b"resolving to a valid EFS DNS name\n")


def test_dns_name_that_is_not_an_efs_name(node, root):
    # match_device: the name resolves, but not to a file system's DNS name
    proc = _run(node, ["localhost:/", node.mountpoint()])
    assert proc.returncode == 1
    assert proc.stderr == (b'The specified CNAME "localhost" did not resolve to a valid DNS name for an EFS mount '
                           b"target. Please refer to the EFS documentation for mounting with DNS names for examples: "
                           b"https://docs.aws.amazon.com/efs/latest/ug/mounting-fs-mount-cmd-dns-name.html\n")


def test_refused_mount_target_ip(node, root):
    # mount_target_ip_address_can_be_resolved(passed_via_options=True): a refused connection is an "Unknown
    # error", reported at once; throw_ip_address_connect_failure_with_fallback_message
    ip = free_loopback_ip()
    proc = _run(node, [FS_ID, node.mountpoint(), "-o", "mounttargetip=" + ip])
    assert proc.returncode == 1
    assert proc.stderr == (b"Cannot connect to file system mount target ip address %s. \nUnknown error when "
                           b"connecting to mount target IP address %s, [Errno 111] Connection refused. Please check "
                           b"if the mount target ip address passed via mount option is correct.\n"
                           % (ip.encode(), ip.encode()))


def test_capath_warns_and_mounts(node, mount_target):
    # check_unsupported_options: "WARN: ..." on stderr, the option dropped, the mount goes on
    proc = node.mount(FS_ID, node.mountpoint(), "tls,capath=/etc/ssl/certs,mounttargetip=" + mount_target.ip)
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stderr == (b'WARN: The "capath" option is not supported and has been ignored, as amazon-efs-utils '
                           b"relies on a built-in trust store.\n")
    [rec] = node.records()
    assert "capath" not in rec["options"]


def test_tlsport_without_tls_is_ignored(node, mount_target):
    # check_options_validity looks at tlsport only with tls: 1.36 mounts, and so do we
    mp = node.mountpoint()
    proc = node.mount(FS_ID, mp, "tlsport=notanumber,mounttargetip=" + mount_target.ip, env={"RECORDER_PROBE": ""})
    assert proc.returncode == 0, proc.stderr.decode()
    [rec] = node.records()
    assert "tlsport" not in rec["options"] and in_kernel_mount_table(mp)


def test_tls_mount_runs_mount_nfs4_with_the_fixed_path(node, mount_target):
    # find_command_path does os.putenv("PATH", ...) before stunnel starts: every later program of a TLS mount
    # (stunnel, mount.nfs4, nsenter) runs with that PATH; a non-TLS mount keeps the caller's
    caller = {"PATH": "/opt/caller/bin:" + os.environ.get("PATH", "/usr/bin:/bin")}
    # (the interpreter named, so that no launcher such as a pyenv shim changes PATH on the way)
    proc = node.mount(FS_ID, node.mountpoint("tls"), "tls,mounttargetip=" + mount_target.ip, env=caller,
                      python=sys.executable)
    assert proc.returncode == 0, proc.stderr.decode()
    proc = node.mount(FS_ID, node.mountpoint("plain"), "mounttargetip=" + mount_target.ip,
                      env=dict(caller, RECORDER_PROBE=""), python=sys.executable)
    assert proc.returncode == 0, proc.stderr.decode()
    tls, plain = node.records()
    assert tls["path"] == STUNNEL_SEARCH_PATH
    assert plain["path"] == caller["PATH"]


def test_state_keeps_the_mount_point_as_given_and_1_36_modes(node, mount_target):
    # write_tls_tunnel_state_file stores the mount point as given (a trailing slash stays); ca_dirs_check makes
    # <name>+/ on the way to database/ with the default mode, and openssl ca leaves .rand with 0600
    mp = node.mountpoint() + "/"
    old = os.umask(0o022)
    try:
        proc = node.mount(FS_ID, mp, "tls,mounttargetip=" + mount_target.ip)
    finally:
        os.umask(old)
    assert proc.returncode == 0, proc.stderr.decode()
    [(name, st)] = node.states().items()
    assert st["mountpoint"] == mp
    assert name == "%s.%s.%s" % (FS_ID, mp.strip("/").replace("/", "."), name.rsplit(".", 1)[1])
    mount_dir = os.path.join(node.state_dir, st["mountStateDir"])

    def mode(*p):
        return stat.S_IMODE(os.stat(os.path.join(mount_dir, *p)).st_mode)
    assert mode() == 0o755
    assert mode("database") == 0o750 and mode("certs") == 0o750
    assert mode("database", ".rand") == 0o600
    assert mode("database", "index.txt") == 0o644


def test_warm_tls_mount_does_not_import_python3_cryptography(node, mount_target, tmp_path):
    # the node key exists: it is read and used through libcrypto, and python3-cryptography (a third of a mount's
    # CPU to import) is never loaded; a stand-in package that refuses to import proves it
    blocker = tmp_path / "nocrypto" / "cryptography"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('python3-cryptography must not be imported here')\n")
    from .iam_e2e_test import _server
    srv = _server()  # a container credentials endpoint, so that the iam path (SigV4 extension) runs too
    try:
        env = {"PYTHONPATH": str(blocker.parent),
               "EFS_UTILS_ECS_CREDENTIALS_ENDPOINT": "http://127.0.0.1:%d" % srv.server_address[1]}
        for name, opts in (("tls", "tls"), ("iam", "tls,iam,awscredsuri=/v2/credentials/abc")):
            proc = node.mount(FS_ID, node.mountpoint(name), opts + ",mounttargetip=" + mount_target.ip, env=env)
            assert proc.returncode == 0, proc.stderr.decode()
    finally:
        srv.shutdown()
    assert len(node.records()) == 2
