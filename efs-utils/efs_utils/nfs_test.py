import pytest

from . import nfs
from .errors import FatalError


def _script(tmp_path, body):
    p = tmp_path / "mount.nfs4"
    p.write_text("#!/bin/sh\n" + body)
    p.chmod(0o755)
    return str(p)


def test_command_with_netns():
    assert nfs.command("/sbin/mount.nfs4", "127.0.0.1:/", "/mnt", "port=1", "/run/netns/x") == \
        ["nsenter", "--net=/run/netns/x", "/sbin/mount.nfs4", "127.0.0.1:/", "/mnt", "-o", "port=1"]


def test_retries_reset_by_peer_then_succeeds(tmp_path, capsys):
    count = tmp_path / "count"
    script = _script(tmp_path, 'echo x >> %s\n[ $(wc -l < %s) -ge 3 ] && exit 0\n'
                               'echo "mount.nfs4: Connection reset by peer" >&2; exit 32\n' % (count, count))
    sleeps = []
    nfs.mount([script, "s", "/m", "-o", "o"], True, 3, 15, sleep=sleeps.append)
    assert count.read_text().count("x") == 3 and len(sleeps) == 2
    assert 1 <= sleeps[0] < 2 and 1.5 <= sleeps[1] < 2.5
    # 1.36 call_nfs_mount_command_with_retry_succeed announces each retry on stderr (the bytes as Python prints them)
    assert capsys.readouterr().err.splitlines() == [
        "Mount attempt 1/3 failed due to b'mount.nfs4: Connection reset by peer', wait 1 sec before next attempt.",
        "Mount attempt 2/3 failed due to b'mount.nfs4: Connection reset by peer', wait %d sec before next attempt."
        % sleeps[1]]


def test_other_errors_are_not_retried_and_keep_the_exit_code(tmp_path):
    count = tmp_path / "count"
    script = _script(tmp_path, 'echo x >> %s\necho "mount.nfs4: access denied" >&2; exit 32\n' % count)
    with pytest.raises(FatalError) as e:
        nfs.mount([script, "s", "/m", "-o", "o"], True, 3, 15, sleep=lambda s: None)
    # 1.36 mount_nfs: fatal_error(err.strip(), message, returncode) with err bytes
    assert e.value.exit_code == 32 and e.value.message == "b'mount.nfs4: access denied'"
    assert e.value.log_message == 'Failed to mount  at /m: returncode=32, stderr="b\'mount.nfs4: access denied\'"'
    assert count.read_text().count("x") == 1


def test_timeout_is_retried_and_last_attempt_has_no_timeout(tmp_path):
    count = tmp_path / "count"
    script = _script(tmp_path, 'echo x >> %s\n[ $(wc -l < %s) -ge 2 ] && { sleep 1.2; exit 0; }\nsleep 5\n'
                     % (count, count))
    sleeps = []
    nfs.mount([script, "s", "/m", "-o", "o"], True, 2, 1, sleep=sleeps.append)
    assert count.read_text().count("x") == 2
    assert sleeps == [0]  # 1.36 retries a timed-out attempt at once


@pytest.mark.parametrize("release,want", [("5.4.0", True), ("5.3.18-1", False), ("6.18.44-fc", True), ("4.19", False),
                                          ("x", False)])
def test_kernel_version(release, want):
    assert nfs.kernel_at_least(release, 5, 4) is want


def test_readahead_written_to_bdi(tmp_path):
    import os
    dev = os.stat(str(tmp_path)).st_dev
    bdi = tmp_path / "bdi" / ("%d:%d" % (os.major(dev), os.minor(dev)))
    bdi.mkdir(parents=True)
    (bdi / "read_ahead_kb").write_text("128")
    assert nfs.optimize_readahead(str(tmp_path), "rsize=1048576,hard", str(tmp_path / "bdi"), "5.10.0")
    assert (bdi / "read_ahead_kb").read_text() == "15360"
    assert not nfs.optimize_readahead(str(tmp_path), "rsize=65536", str(tmp_path / "bdi"), "4.18.0")
    assert not nfs.optimize_readahead(str(tmp_path), "", str(tmp_path / "missing"), "5.10.0")
