"""Test fixtures: a scratch node (config, state and log dirs), a mount target stand-in (echo server
behind a real stunnel TLS server with a test CA), and the mount.nfs4 recorder."""

import datetime
import ipaddress
import json
import os
import random
import shutil
import signal
import socket
import socketserver
import subprocess
import sys
import threading
import time

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

HERE = os.path.dirname(os.path.abspath(__file__))
EFS_UTILS = os.path.dirname(HERE)
REPO = os.path.dirname(EFS_UTILS)
MOUNT_EFS = os.path.join(EFS_UTILS, "bin", "mount.efs")
WATCHDOG = os.path.join(EFS_UTILS, "bin", "amazon-efs-mount-watchdog")
RECORDER = os.path.join(HERE, "testdata", "mount_nfs4_recorder.py")
DIST_CONF = os.path.join(EFS_UTILS, "dist", "efs-utils.conf")
FS_ID = "fs-0123456789abcdef0"
REGION = "us-east-1"
DNS_NAME = "%s.efs.%s.amazonaws.com" % (FS_ID, REGION)
STUNNEL = shutil.which("stunnel4") or shutil.which("stunnel")


def need_root_and_stunnel():
    """Skip (locally) when the e2e prerequisites are missing; CI runs as root with stunnel4."""
    if os.geteuid() != 0:
        pytest.skip("needs root (bind mounts, mount.efs root check); CI runs these as root")
    if not STUNNEL:
        pytest.skip("needs stunnel4 (apt-get install stunnel4); go tool mage test installs it")


def _name(cn):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


class TestCA:
    """A CA and server certificates for the mount target stand-in."""

    def __init__(self, directory):
        self.dir = directory
        self.key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        self.cert = (x509.CertificateBuilder().subject_name(_name("efs-utils test CA")).issuer_name(_name("efs-utils test CA"))
                     .public_key(self.key.public_key()).serial_number(x509.random_serial_number())
                     .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=2))
                     .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                     .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                                  data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                                  crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
                     .sign(self.key, hashes.SHA256()))
        self.path = os.path.join(directory, "ca.pem")
        with open(self.path, "wb") as f:
            f.write(self.cert.public_bytes(serialization.Encoding.PEM))

    def server(self, dns_names, tag):
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        cert = (x509.CertificateBuilder().subject_name(_name(dns_names[0])).issuer_name(self.cert.subject)
                .public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
                .add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in dns_names]), critical=False)
                .sign(self.key, hashes.SHA256()))
        cert_path = os.path.join(self.dir, "%s.crt" % tag)
        key_path = os.path.join(self.dir, "%s.key" % tag)
        with open(cert_path, "wb") as f:
            f.write(cert.public_bytes(serialization.Encoding.PEM))
        with open(key_path, "wb") as f:
            f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption()))
        return cert_path, key_path


class _Echo(socketserver.BaseRequestHandler):
    def handle(self):
        while True:
            data = self.request.recv(4096)
            if not data:
                return
            self.request.sendall(data)


class EchoServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def free_loopback_ip(port=2049):
    """A random 127.x.y.z where port is free (all of 127/8 is local on Linux)."""
    for _ in range(100):
        ip = "127.%d.%d.%d" % (random.randint(1, 254), random.randint(0, 255), random.randint(2, 254))
        s = socket.socket()
        try:
            s.bind((ip, port))
            return ip
        except OSError:
            continue
        finally:
            s.close()
    raise RuntimeError("no free loopback address for port %d" % port)


class MountTarget:
    """A stand-in for an EFS mount target: stunnel TLS server on <ip>:2049 in front of an echo server."""

    def __init__(self, directory, ca, dns_names, ip=None):
        self.dir = directory
        os.makedirs(directory, exist_ok=True)
        self.ip = ip or free_loopback_ip()
        self.echo = EchoServer(("127.0.0.1", 0), _Echo)
        threading.Thread(target=self.echo.serve_forever, daemon=True).start()
        cert, key = ca.server(dns_names, "server-%s" % self.ip)
        conf = os.path.join(directory, "server-%s.conf" % self.ip)
        with open(conf, "w") as f:
            f.write("foreground = yes\npid = %s/server-%s.pid\noutput = %s/server-%s.log\n\n[nfs]\n"
                    "accept = %s:2049\nconnect = 127.0.0.1:%d\ncert = %s\nkey = %s\n"
                    % (directory, self.ip, directory, self.ip, self.ip, self.echo.server_address[1], cert, key))
        self.proc = subprocess.Popen([STUNNEL, conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                socket.create_connection((self.ip, 2049), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("server stunnel did not listen on %s:2049" % self.ip)

    def close(self):
        self.proc.terminate()
        self.proc.wait(10)
        self.echo.shutdown()
        self.echo.server_close()


class Node:
    """A scratch efs-utils installation: config, state, logs and the recorder in place of mount.nfs4."""

    def __init__(self, directory, ca_path, key_source, config_overrides=None):
        self.dir = directory
        self.state_dir = os.path.join(directory, "state")
        self.log_dir = os.path.join(directory, "log")
        self.config = os.path.join(directory, "efs-utils.conf")
        self.mounts_file = os.path.join(directory, "mounts")
        self.records_file = os.path.join(directory, "records.jsonl")
        self.export = os.path.join(directory, "export")
        self.private_key = os.path.join(directory, "privateKey.pem")
        for d in (self.state_dir, self.log_dir, self.export):
            os.makedirs(d, exist_ok=True)
        open(self.mounts_file, "w").close()
        if key_source:
            shutil.copy(key_source, self.private_key)
        self.ca_path = ca_path
        self.mounted = []
        self.write_config(config_overrides or {})
        self.env = dict(os.environ)
        self.env.update({
            "EFS_UTILS_CONFIG_FILE": self.config, "EFS_UTILS_STATE_DIR": self.state_dir,
            "EFS_UTILS_LOG_DIR": self.log_dir, "EFS_UTILS_PRIVATE_KEY": self.private_key,
            "EFS_UTILS_MOUNT_NFS4": RECORDER, "EFS_UTILS_PROC_MOUNTS": self.mounts_file,
            "AWS_EC2_METADATA_SERVICE_ENDPOINT": "http://127.0.0.1:9",
            "RECORDER_LOG": self.records_file, "RECORDER_EXPORT": self.export, "RECORDER_PROBE": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
        })
        if STUNNEL:
            self.env["EFS_UTILS_STUNNEL"] = STUNNEL

    def write_config(self, overrides):
        import configparser
        p = configparser.ConfigParser(interpolation=None)
        p.read(DIST_CONF)
        p.set("mount", "region", REGION)
        p.set("mount", "stunnel_cafile", self.ca_path or "/nonexistent")
        p.set("mount", "optimize_readahead", "false")
        p.set("mount-watchdog", "poll_interval_sec", "1")
        for (section, key), value in overrides.items():
            if section != "DEFAULT" and not p.has_section(section):
                p.add_section(section)
            p.set(section, key, value)
        with open(self.config, "w") as f:
            p.write(f)

    def mountpoint(self, name="mnt"):
        path = os.path.join(self.dir, name)
        os.makedirs(path, exist_ok=True)
        return path

    def mount(self, spec, mountpoint, options, env=None, python=None, timeout=60):
        e = dict(self.env)
        e.update(env or {})
        argv = ([python, MOUNT_EFS] if python else [MOUNT_EFS]) + [spec, mountpoint, "-o", options]
        proc = subprocess.run(argv, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        if proc.returncode == 0:
            self.mounted.append(mountpoint)
        return proc

    def records(self):
        if not os.path.exists(self.records_file):
            return []
        with open(self.records_file) as f:
            return [json.loads(line) for line in f if line.strip()]

    def states(self):
        out = {}
        for name in os.listdir(self.state_dir):
            path = os.path.join(self.state_dir, name)
            if name.startswith("fs-") and os.path.isfile(path):
                with open(path) as f:
                    out[name] = json.load(f)
        return out

    def unmount(self, mountpoint):
        subprocess.run(["umount", mountpoint], stderr=subprocess.DEVNULL)
        real = os.path.realpath(mountpoint)
        with open(self.mounts_file) as f:
            lines = [l for l in f if l.split()[1] != real]
        with open(self.mounts_file, "w") as f:
            f.writelines(lines)

    def watchdog(self, python=None):
        argv = [python or sys.executable, WATCHDOG]
        err = open(os.path.join(self.dir, "watchdog.stderr"), "a")
        return subprocess.Popen(argv, env=self.env, stdout=subprocess.DEVNULL, stderr=err)

    def close(self):
        for st in self.states().values():
            pid = st.get("pid")
            if isinstance(pid, int) and pid > 0:
                try:
                    os.killpg(pid, signal.SIGTERM)
                except OSError:
                    pass
        for mp in self.mounted:
            subprocess.run(["umount", mp], stderr=subprocess.DEVNULL)


@pytest.fixture(scope="session")
def session_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("efs-utils"))


@pytest.fixture(scope="session")
def shared_key(session_dir):
    """One RSA-3072 node key per session (generating it takes about a second)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=3072)
    path = os.path.join(session_dir, "privateKey.pem")
    with open(path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    return path


@pytest.fixture(scope="session")
def test_ca(session_dir):
    return TestCA(session_dir)


@pytest.fixture
def node(tmp_path, test_ca, shared_key):
    n = Node(str(tmp_path), test_ca.path, shared_key)
    yield n
    n.close()


@pytest.fixture
def mount_target(tmp_path, test_ca):
    need_root_and_stunnel()
    mt = MountTarget(str(tmp_path / "target"), test_ca, [DNS_NAME])
    yield mt
    mt.close()


def wait_for(predicate, timeout=10.0, interval=0.05):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    return predicate()


def relay_roundtrip(port, payload=b"hello\n"):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.settimeout(5)
        s.sendall(payload)
        return s.recv(64)


def is_ip(text):
    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        return False


def in_kernel_mount_table(path):
    """in_kernel_mount_table reads the real /proc/self/mounts (os.path.ismount misses same-fs bind mounts)."""
    from . import mounttable
    real = os.path.realpath(path)
    return any(m.mountpoint == real for m in mounttable.read("/proc/self/mounts"))
