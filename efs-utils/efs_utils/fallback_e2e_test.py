"""The botocore fallback end to end: mount.efs -> botocore -> fakeaws (EFS, EC2, STS, IMDS over HTTP) ->
the mount target IP -> real stunnel -> the TLS mount target stand-in. Run with every botocore on this
machine: the system Python's (Debian's 1.29), the newer one EFS_UTILS_TEST_BOTOCORE_PATH names (trixie's
python3-botocore, which `go tool mage test` unpacks into its tool cache) and, where present, pyenv's."""

import glob
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from .conftest import REPO, MountTarget, in_kernel_mount_table, need_root_and_stunnel

FAKEAWS_PKG = os.path.join(REPO, "driver", "test", "fakeaws", "cmd", "fakeaws")
ROLE = "arn:aws:iam::123456789012:role/efs-csi-node"
# A directory holding a newer botocore for the system Python (testharness/pkg/testrun sets it).
BOTOCORE_PATH_ENV = "EFS_UTILS_TEST_BOTOCORE_PATH"


def _botocore_version(python, path=None):
    env = dict(os.environ)
    if path:
        env["PYTHONPATH"] = path
    try:
        out = subprocess.run([python, "-c", "import botocore, cryptography; print(botocore.__version__)"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=30, env=env)
    except OSError:
        return None
    return out.stdout.decode().strip() if out.returncode == 0 else None


def _interpreters():
    """(python, botocore version, PYTHONPATH) for each distinct botocore version found."""
    found = [(sys.executable, _botocore_version(sys.executable), None)]
    extra = os.environ.get(BOTOCORE_PATH_ENV)
    if extra:
        v = _botocore_version(sys.executable, extra)
        if not v:
            raise RuntimeError("%s=%s: the system Python imports no botocore from there" % (BOTOCORE_PATH_ENV, extra))
        found.append((sys.executable, v, extra))
    for cand in sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3"))):
        v = _botocore_version(cand)
        if v and v not in [f[1] for f in found]:
            found.append((cand, v, None))
    return [pytest.param(p, v, path, id="botocore-%s" % v) for p, v, path in found if v]


PYTHONS = _interpreters()


@pytest.fixture(scope="session")
def fakeaws_binary(tmp_path_factory):
    if not os.path.isdir(FAKEAWS_PKG):
        pytest.fail("driver/test/fakeaws is missing from this tree; the fallback tests need it")
    if not shutil.which("go"):
        pytest.skip("needs Go on PATH to build driver/test/fakeaws: install it from https://go.dev/dl (CI has it)")
    out = str(tmp_path_factory.mktemp("fakeaws") / "fakeaws")
    subprocess.run(["go", "build", "-o", out, "./driver/test/fakeaws/cmd/fakeaws"], cwd=REPO, check=True)
    return out


class FakeAWS:
    """One fakeaws process; the node's zone is what IMDS reports."""

    def __init__(self, binary, directory, instance_zone):
        self.log = os.path.join(directory, "fakeaws.log")
        self.proc = subprocess.Popen([binary, "--addr", "127.0.0.1:0", "--zone", "us-east-1a=use1-az1",
                                      "--zone", "us-east-1b=use1-az2", "--instance-zone", instance_zone,
                                      "--role", ROLE], stdout=subprocess.PIPE, stderr=open(self.log, "w"))
        self.url = self.proc.stdout.readline().decode().strip()
        assert self.url.startswith("http://127.0.0.1:"), self.url
        deadline = time.time() + 10
        self.subnets = {}
        while len(self.subnets) < 2 and time.time() < deadline:
            with open(self.log) as f:
                self.subnets = dict(re.findall(r'zone="([^"]+)".*?subnetID="([^"]+)"', f.read()))
            time.sleep(0.02)
        import botocore.session
        session = botocore.session.get_session()
        self.efs = session.create_client("efs", region_name="us-east-1", endpoint_url=self.url,
                                         aws_access_key_id="AKIDSEED", aws_secret_access_key="seed")

    def one_zone_fs(self, zone, ip):
        """Creates a One Zone file system in zone with a mount target at ip (seeded through botocore)."""
        fs = self.efs.create_file_system(CreationToken="t-%s-%s" % (zone, ip), AvailabilityZoneName=zone)
        fs_id = fs["FileSystemId"]
        self._wait(lambda: self.efs.describe_file_systems(FileSystemId=fs_id)["FileSystems"][0]["LifeCycleState"])
        self.efs.create_mount_target(FileSystemId=fs_id, SubnetId=self.subnets[zone], IpAddress=ip)
        self._wait(lambda: self.efs.describe_mount_targets(FileSystemId=fs_id)["MountTargets"][0]["LifeCycleState"])
        return fs_id

    @staticmethod
    def _wait(get_state):
        deadline = time.time() + 10
        while get_state() != "available":
            assert time.time() < deadline, "fakeaws resource never became available"
            time.sleep(0.05)

    def close(self):
        self.proc.terminate()
        self.proc.wait(10)


@pytest.fixture
def aws_in(fakeaws_binary, tmp_path):
    started = []

    def start(zone):
        f = FakeAWS(fakeaws_binary, str(tmp_path), zone)
        started.append(f)
        return f
    yield start
    for f in started:
        f.close()


def _fallback_node(node, aws, extra_env=None, config_file_creds=True, pythonpath=None):
    """Point the node at fakeaws: IMDS (region and AZ come from it), botocore endpoints, credentials; pythonpath
    puts another botocore first."""
    node.write_config({("mount", "region"): ""})
    cfg = open(node.config).read().replace("region = \n", "")
    open(node.config, "w").write(cfg)
    creds = os.path.join(node.dir, "aws-config")
    with open(creds, "w") as f:
        f.write("[default]\naws_access_key_id = AKIDNODE\naws_secret_access_key = node-secret\n")
    node.env.update({"AWS_EC2_METADATA_SERVICE_ENDPOINT": aws.url, "AWS_ENDPOINT_URL": aws.url,
                     "AWS_CONFIG_FILE": creds, "AWS_SDK_LOAD_CONFIG": "1",
                     "AWS_SHARED_CREDENTIALS_FILE": os.path.join(node.dir, "no-credentials")})
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "AWS_SESSION_TOKEN"):
        node.env.pop(k, None)
    node.env.update(extra_env or {})
    if pythonpath:
        node.env["PYTHONPATH"] = pythonpath


def _target(tmp_path, test_ca, fs_id, ip=None):
    return MountTarget(str(tmp_path / ("mt-" + fs_id)), test_ca, ["%s.efs.us-east-1.amazonaws.com" % fs_id], ip)


@pytest.mark.parametrize("python,version,path", PYTHONS)
def test_one_zone_fallback_tls_mount(node, aws_in, test_ca, tmp_path, python, version, path):
    need_root_and_stunnel()
    aws = aws_in("us-east-1a")
    from .conftest import free_loopback_ip
    ip = free_loopback_ip()
    fs_id = aws.one_zone_fs("us-east-1a", ip)
    mt = _target(tmp_path, test_ca, fs_id, ip)
    try:
        _fallback_node(node, aws, pythonpath=path)
        mp = node.mountpoint()
        proc = node.mount(fs_id, mp, "tls", python=python)
        assert proc.returncode == 0, proc.stderr.decode()
        [st] = node.states().values()
        with open(st["files"][0]) as f:
            conf = f.read()
        # stunnel connects to the fallback IP but still checks the file system's DNS name
        assert "connect = %s:2049" % ip in conf
        assert "checkHost = %s.efs.us-east-1.amazonaws.com" % fs_id in conf
        assert st["region"] == "us-east-1"  # from fakeaws IMDS
        assert in_kernel_mount_table(mp)
    finally:
        mt.close()


@pytest.mark.parametrize("python,version,path", PYTHONS)
def test_one_zone_fallback_non_tls_mount(node, aws_in, test_ca, tmp_path, python, version, path):
    need_root_and_stunnel()
    aws = aws_in("us-east-1a")
    from .conftest import free_loopback_ip
    ip = free_loopback_ip()
    fs_id = aws.one_zone_fs("us-east-1a", ip)
    mt = _target(tmp_path, test_ca, fs_id, ip)
    try:
        _fallback_node(node, aws, pythonpath=path)
        proc = node.mount(fs_id + ":/exports", node.mountpoint(), "", python=python, env={"RECORDER_PROBE": ""})
        assert proc.returncode == 0, proc.stderr.decode()
        assert node.records()[0]["source"] == "%s:/exports" % ip
    finally:
        mt.close()


@pytest.mark.parametrize("python,version,path", PYTHONS)
def test_cross_az_mount_is_refused_without_az_option(node, aws_in, test_ca, tmp_path, python, version, path):
    need_root_and_stunnel()
    aws = aws_in("us-east-1b")  # the node is in us-east-1b, the file system only in us-east-1a
    from .conftest import free_loopback_ip
    ip = free_loopback_ip()
    fs_id = aws.one_zone_fs("us-east-1a", ip)
    mt = _target(tmp_path, test_ca, fs_id, ip)
    try:
        _fallback_node(node, aws, pythonpath=path)
        proc = node.mount(fs_id, node.mountpoint(), "tls", python=python)
        assert proc.returncode == 1
        err = proc.stderr.decode()
        assert 'Failed to resolve "%s.efs.us-east-1.amazonaws.com"' % fs_id in err
        assert "No matching mount target in the az us-east-1b" in err
        assert "passing the availability zone name option" in err
        assert node.records() == [] and node.states() == {}
        # with an explicit az= the cross-AZ mount is what the user asked for
        proc = node.mount(fs_id, node.mountpoint("explicit"), "tls,az=us-east-1a", python=python)
        assert proc.returncode == 0, proc.stderr.decode()
        [st] = node.states().values()
        assert "checkHost = %s.efs.us-east-1.amazonaws.com" % fs_id in open(st["files"][0]).read()
    finally:
        mt.close()


def test_fallback_with_web_identity_in_aws_config_file(node, aws_in, test_ca, tmp_path):
    """The OpenShift node pods' credentials: AWS_CONFIG_FILE with role_arn + web_identity_token_file."""
    need_root_and_stunnel()
    modern = [p for p in PYTHONS if tuple(int(x) for x in p.values[1].split(".")[:2]) >= (1, 31)]
    if not modern:
        pytest.skip("needs botocore >= 1.31 (AWS_ENDPOINT_URL_STS support) to send STS to fakeaws; Debian "
                    "bookworm's python3-botocore is 1.29: run `go tool mage test` (it unpacks trixie's into its tool "
                    "cache and sets %s) or set %s to a directory with a newer botocore" % (BOTOCORE_PATH_ENV, BOTOCORE_PATH_ENV))
    python, _, path = modern[0].values
    aws = aws_in("us-east-1a")
    from .conftest import free_loopback_ip
    ip = free_loopback_ip()
    fs_id = aws.one_zone_fs("us-east-1a", ip)
    mt = _target(tmp_path, test_ca, fs_id, ip)
    try:
        _fallback_node(node, aws, pythonpath=path)
        token = os.path.join(node.dir, "token")
        with open(token, "w") as f:
            f.write("eyJhbGciOiJSUzI1NiJ9.projected-service-account-token")
        def use_role(arn):
            with open(node.env["AWS_CONFIG_FILE"], "w") as f:
                f.write("[default]\nrole_arn = %s\nweb_identity_token_file = %s\n" % (arn, token))

        # a role STS does not know: the mount fails, so no other credential source is in play
        use_role("arn:aws:iam::123456789012:role/not-registered")
        proc = node.mount(fs_id, node.mountpoint("denied"), "tls", python=python)
        assert proc.returncode == 1
        assert "AssumeRoleWithWebIdentity" in proc.stderr.decode()
        use_role(ROLE)
        proc = node.mount(fs_id, node.mountpoint(), "tls", python=python)
        assert proc.returncode == 0, proc.stderr.decode()
    finally:
        mt.close()


def test_missing_botocore_says_what_to_install(node, aws_in, tmp_path):
    aws = aws_in("us-east-1a")
    _fallback_node(node, aws)
    blocker = tmp_path / "nobotocore" / "botocore"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('botocore is not installed (test)')\n")
    node.env["PYTHONPATH"] = str(blocker.parent)
    if os.geteuid() != 0:
        pytest.skip("needs root (mount.efs refuses to run otherwise); CI runs as root")
    proc = node.mount("fs-0123456789abcdef0", node.mountpoint(), "", env={"RECORDER_PROBE": ""})
    assert proc.returncode == 1
    err = proc.stderr.decode()
    assert "Failed to import necessary dependency botocore, please install botocore first." in err
    assert "requirements.txt.ocp" in err and "python3-botocore" in err


def test_iam_web_identity_credentials_from_sts(aws_in, tmp_path):
    """Our own AssumeRoleWithWebIdentity call (no botocore) against fakeaws's STS."""
    from . import credentials
    from .imds import IMDS
    aws = aws_in("us-east-1a")
    token = tmp_path / "token"
    token.write_text("projected-token")
    env = {"AWS_ROLE_ARN": ROLE, "AWS_WEB_IDENTITY_TOKEN_FILE": str(token), "AWS_ENDPOINT_URL_STS": aws.url}
    creds, src = credentials.get("us-east-1", IMDS(aws.url), "http://127.0.0.1:9", env, home=str(tmp_path))
    assert src == "webidentity:%s,%s" % (ROLE, token)
    assert creds.access_key and creds.secret_key and creds.token
    again = credentials.refetch(src, "us-east-1", IMDS(aws.url), "", env, home=str(tmp_path))
    assert again.access_key
