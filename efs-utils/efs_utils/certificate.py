"""The per-mount client certificate and the node's shared private key.

efs-utils 1.36 runs openssl req/ca/rsa/asn1parse for this; we build the same certificate in
process: subject and issuer CN=<hostname[:64]>, SHA-256, valid from 15 minutes ago for 3 hours,
subjectKeyIdentifier and the EFS extensions under 1.3.6.1.4.1.4843.7. The DER is ours (x509der);
the key is read and the certificate signed by OpenSSL's libcrypto (libcrypto.py), with
python3-cryptography imported only to create the key once per node, or when libcrypto cannot be used.
"""

import errno
import hashlib
import logging
import os
import time
from datetime import datetime, timedelta, timezone
from typing import NamedTuple, Optional

from . import der, libcrypto, x509der
from .errors import FatalError

OID_ACCESS_POINT = "1.3.6.1.4.1.4843.7.1"
OID_CLIENT_AUTH = "1.3.6.1.4.1.4843.7.2"
OID_FS_ID = "1.3.6.1.4.1.4843.7.3"
OID_CLIENT_INFO = "1.3.6.1.4.1.4843.7.4"
CERT_DATETIME_FORMAT = "%y%m%d%H%M%SZ"
NOT_BEFORE = timedelta(minutes=15)
NOT_AFTER = timedelta(hours=3)
KEY_BITS = 3072
LOCK_RETRY_SEC = 0.05
# A lock older than this is left over from a killed process (aws/efs-utils#145): remove it.
LOCK_STALE_SEC = 60.0

log = logging.getLogger(__name__)


class Credentials(NamedTuple):
    """Credentials are AWS keys used to sign the iam extension."""

    access_key: str
    secret_key: str
    token: Optional[str] = None


class CertRequest(NamedTuple):
    """CertRequest is what goes into one mount's certificate."""

    common_name: str
    region: str
    fs_id: str
    client_source: str
    version: str
    access_point: Optional[str] = None
    credentials: Optional[Credentials] = None


def _acquire_lock(lock_path: str) -> int:
    while True:
        try:
            return os.open(lock_path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        except OSError as e:
            if e.errno != errno.EEXIST:
                raise
        try:
            age = time.time() - os.stat(lock_path).st_mtime
            if age > LOCK_STALE_SEC:
                log.warning("removing stale private key lock %s (%.0fs old)", lock_path, age)
                os.unlink(lock_path)
                continue
        except FileNotFoundError:
            continue
        time.sleep(LOCK_RETRY_SEC)


def load_trusted_pem_key(data: bytes):
    """load_trusted_pem_key loads the node's own key with python3-cryptography, without OpenSSL's RSA_check_key.

    The check proves p and q prime, about 120 ms for RSA-3072 on a small VM, on every mount. It
    guards against malformed keys from untrusted sources; this key is generated on the node and
    readable by root only. cryptography >= 39 has a public switch for it; 36-38 (RHEL 9 ships 36)
    only the backend flag its own test suite uses; without either the key is checked as usual.
    """
    from cryptography.hazmat.primitives import serialization
    try:
        return serialization.load_pem_private_key(data, password=None, unsafe_skip_rsa_key_validation=True)
    except TypeError:
        pass
    try:
        from cryptography.hazmat.backends.openssl.backend import backend
    except ImportError:
        backend = None
    if backend is None or not hasattr(backend, "_rsa_skip_check_key"):
        return serialization.load_pem_private_key(data, password=None)
    saved = backend._rsa_skip_check_key
    backend._rsa_skip_check_key = True
    try:
        return serialization.load_pem_private_key(data, password=None)
    finally:
        backend._rsa_skip_check_key = saved


class CryptographyKey:
    """CryptographyKey gives a python3-cryptography RSA key the two operations the mount path uses
    (libcrypto.RSAKey has the same two)."""

    def __init__(self, key):
        self.key = key

    def spki_der(self) -> bytes:
        from cryptography.hazmat.primitives import serialization
        return self.key.public_key().public_bytes(serialization.Encoding.DER,
                                                  serialization.PublicFormat.SubjectPublicKeyInfo)

    def sign_sha256(self, data: bytes) -> bytes:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding
        return self.key.sign(data, padding.PKCS1v15(), hashes.SHA256())


def load_key(data: bytes, path: str = "private key"):
    """load_key reads the node's PEM key: through libcrypto, else python3-cryptography."""
    key = libcrypto.load(data)
    if key is not None:
        return key
    from cryptography.hazmat.primitives.asymmetric import rsa
    loaded = load_trusted_pem_key(data)
    if not isinstance(loaded, rsa.RSAPrivateKey):
        raise FatalError("private key %s: want an RSA key" % path)
    return CryptographyKey(loaded)


def _load_key(path: str):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    if not data.strip():
        return None
    return load_key(data, path)


def private_key(path: str, lock_path: str):
    """private_key loads the node's shared key, creating it once under the efs-utils lock.

    The key is RSA-3072, PKCS#8 PEM, mode 0400, as `openssl genpkey` writes it for 1.36. An
    empty file is replaced. The new key is written to a temporary file and renamed, so a crash
    never leaves a truncated key behind.
    """
    key = _load_key(path)
    if key is not None:
        return key
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fd = _acquire_lock(lock_path)
    try:
        key = _load_key(path)
        if key is not None:
            return key
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa
        new = rsa.generate_private_key(public_exponent=65537, key_size=KEY_BITS)
        pem = new.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
        tmp = path + ".tmp.%d" % os.getpid()
        wfd = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o400)
        try:
            os.write(wfd, pem)
            os.fsync(wfd)
        finally:
            os.close(wfd)
        os.replace(tmp, path)
        return load_key(pem, path)
    finally:
        os.close(fd)
        try:
            os.unlink(lock_path)
        except FileNotFoundError:
            pass


def _der_item(buf: bytes, i: int) -> "tuple[int, int, int]":
    """_der_item is (tag, start, end) of the content of the DER item at buf[i]."""
    tag, length, i = buf[i], buf[i + 1], i + 2
    if length & 0x80:
        n = length & 0x7F
        length, i = int.from_bytes(buf[i:i + n], "big"), i + n
    return tag, i, i + length


def pkcs1_public_key(spki: bytes) -> bytes:
    """pkcs1_public_key is the RSAPublicKey inside a SubjectPublicKeyInfo: the content of its BIT STRING."""
    _, start, _ = _der_item(spki, 0)
    _, _, alg_end = _der_item(spki, start)
    tag, bits, end = _der_item(spki, alg_end)
    if tag != 0x03 or spki[bits] != 0:
        raise ValueError("not a SubjectPublicKeyInfo")
    return spki[bits + 1:end]


def public_key_hash(key) -> str:
    """public_key_hash is SHA-1 of the SubjectPublicKeyInfo BIT STRING content (the PKCS#1 key)."""
    return hashlib.sha1(pkcs1_public_key(key.spki_der())).hexdigest()


def client_auth_extension(key, req: CertRequest, now: datetime) -> bytes:
    """client_auth_extension is the DER of efs_client_auth for the iam option."""
    creds = req.credentials
    assert creds is not None
    from . import sigv4  # only for iam: it loads hmac and urllib.parse
    sig = sigv4.signature(public_key_hash(key), creds.access_key, creds.secret_key, now, req.region,
                          req.fs_id, creds.token)
    items = [
        der.utf8_string(creds.access_key),
        der.octet_string(sig.encode("ascii")),
        der.utc_time(now.strftime(CERT_DATETIME_FORMAT)),
    ]
    if creds.token:
        items.append(der.explicit(0, der.utf8_string(creds.token)))
    return der.sequence(items)


def client_info_extension(req: CertRequest) -> bytes:
    return der.sequence([der.utf8_string(req.client_source), der.utf8_string(req.version)])


def build_certificate(key, req: CertRequest, now: datetime) -> bytes:
    """build_certificate returns the DER of the self-signed client certificate of one mount."""
    spki = key.spki_der()
    pkcs1 = pkcs1_public_key(spki)
    # subjectKeyIdentifier "hash": SHA-1 of the subjectPublicKey BIT STRING content (RFC 5280 4.2.1.2 (1))
    exts = [(x509der.OID_SUBJECT_KEY_IDENTIFIER, der.octet_string(hashlib.sha1(pkcs1).digest()))]
    if req.access_point:
        exts.append((OID_ACCESS_POINT, der.utf8_string(req.access_point)))
    if req.credentials:
        exts.append((OID_CLIENT_AUTH, client_auth_extension(key, req, now)))
    exts.append((OID_FS_ID, der.utf8_string(req.fs_id)))
    exts.append((OID_CLIENT_INFO, client_info_extension(req)))
    tbs = x509der.tbs_certificate(x509der.TBS(req.common_name[:64], spki, now - NOT_BEFORE, now + NOT_AFTER, exts),
                                  x509der.serial_number())
    return x509der.certificate(tbs, key.sign_sha256(tbs))


def _write(path: str, data: bytes, mode: int = 0o644) -> None:
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, mode)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def _openssl_config(mount_dir: str, key_path: str, req: CertRequest) -> str:
    """_openssl_config documents the certificate in the openssl ca form 1.36 keeps beside it."""
    lines = [
        "dir = %s" % mount_dir, "RANDFILE = $dir/database/.rand", "",
        "[ ca ]", "default_ca = local_ca", "",
        "[ local_ca ]", "database = $dir/database/index.txt", "serial = $dir/database/serial",
        "private_key = %s" % key_path, "cert = $dir/certificate.pem", "new_certs_dir = $dir/certs",
        "default_md = sha256", "preserve = no", "policy = efsPolicy", "x509_extensions = v3_ca", "",
        "[ efsPolicy ]", "CN = supplied", "",
        "[ req ]", "prompt = no", "distinguished_name = req_distinguished_name", "",
        "[ req_distinguished_name ]", "CN = %s" % req.common_name[:64], "",
        "[ v3_ca ]", "subjectKeyIdentifier = hash",
    ]
    if req.access_point:
        lines.append("1.3.6.1.4.1.4843.7.1 = ASN1:UTF8String:%s" % req.access_point)
    if req.credentials:
        lines.append("1.3.6.1.4.1.4843.7.2 = ASN1:SEQUENCE:efs_client_auth")
    lines += ["1.3.6.1.4.1.4843.7.3 = ASN1:UTF8String:%s" % req.fs_id,
              "1.3.6.1.4.1.4843.7.4 = ASN1:SEQUENCE:efs_client_info", "",
              "[ efs_client_info ]", "source = UTF8String:%s" % req.client_source,
              "efs_utils_version = UTF8String:%s" % req.version, ""]
    return "\n".join(lines)


def write_mount_certificate(mount_dir: str, key_path: str, key, req: CertRequest,
                            now: Optional[datetime] = None, dir_mode: int = 0o750) -> str:
    """write_mount_certificate writes <name>+/ as efs-utils 1.36 lays it out and returns the
    certificateCreationTime (YYMMDDHHMMSSZ, UTC) for the state file."""
    now = now or datetime.now(timezone.utc).replace(microsecond=0)
    # Modes as 1.36 leaves them (ca_dirs_check, ca_supporting_files_check, then openssl): <name>+/ is made
    # on the way to database/ with the default mode (0755 under umask 022), database/ and certs/ with the
    # state_file_dir_mode, and openssl ca rewrites .rand with 0600.
    os.makedirs(mount_dir, exist_ok=True)
    db = os.path.join(mount_dir, "database")
    for d in (db, os.path.join(mount_dir, "certs")):
        if not os.path.exists(d):
            os.mkdir(d, dir_mode)
    for name, content, mode in (("index.txt", "", 0o644), ("index.txt.attr", "unique_subject = no", 0o644),
                                ("serial", "00", 0o644), (".rand", "", 0o600)):
        p = os.path.join(db, name)
        if not os.path.exists(p):
            fd = os.open(p, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, mode)
            try:
                os.write(fd, content.encode())
            finally:
                os.close(fd)
    _write(os.path.join(mount_dir, "config.conf"), _openssl_config(mount_dir, key_path, req).encode())
    cert = build_certificate(key, req, now)
    _write(os.path.join(mount_dir, "certificate.pem"), x509der.pem(cert))
    if req.credentials:
        _write(os.path.join(mount_dir, "publicKey.pem"), x509der.pem(key.spki_der(), "PUBLIC KEY"))
    return now.strftime(CERT_DATETIME_FORMAT)


def parse_creation_time(value: str) -> datetime:
    """parse_creation_time reads a state file's certificateCreationTime."""
    return datetime.strptime(value, CERT_DATETIME_FORMAT).replace(tzinfo=timezone.utc)
