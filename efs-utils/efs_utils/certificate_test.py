import hashlib
import os
import stat
import subprocess
import threading
import time
from datetime import datetime, timezone

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa

from . import certificate, libcrypto, sigv4
from .certificate import CertRequest, Credentials
from .errors import FatalError

NOW = datetime(2026, 5, 1, 12, 0, 0, tzinfo=timezone.utc)
AP = "fsap-0123456789abcdef0"
CREDS = Credentials("AKIDEXAMPLE", "secret/key+example", "session-token-example")


@pytest.fixture(scope="module")
def key(tmp_path_factory):
    d = tmp_path_factory.mktemp("key")
    return str(d / "privateKey.pem"), certificate.private_key(str(d / "privateKey.pem"), str(d / "lock"))


def _req(**kw):
    base = dict(common_name="node-1.example.internal", region="us-east-1", fs_id="fs-deadbeef",
                client_source="k8s", version="1.36.0", access_point=AP, credentials=CREDS)
    base.update(kw)
    return CertRequest(**base)


def _ext(cert, oid):
    return cert.extensions.get_extension_for_oid(x509.ObjectIdentifier(oid)).value.value


def _crypto(path):
    """The key file read by python3-cryptography, for the fields our key object does not expose."""
    with open(path, "rb") as f:
        return serialization.load_pem_private_key(f.read(), password=None)


def _build(k, req, now=NOW):
    return x509.load_der_x509_certificate(certificate.build_certificate(k, req, now))


def test_private_key_created_once_with_mode_0400(key):
    path, k = key
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o400
    assert _crypto(path).key_size == 3072
    with open(path, "rb") as f:
        assert f.read().startswith(b"-----BEGIN PRIVATE KEY-----")  # PKCS#8, as openssl genpkey writes
    again = certificate.private_key(path, path + ".lock")
    assert again.spki_der() == k.spki_der()


def test_empty_key_file_is_replaced_and_stale_lock_removed(tmp_path, key):
    path = str(tmp_path / "privateKey.pem")
    open(path, "w").close()
    lock = str(tmp_path / "efs-utils-lock")
    open(lock, "w").close()
    old = time.time() - 3600
    os.utime(lock, (old, old))
    certificate.private_key(path, lock)
    assert _crypto(path).key_size == 3072 and not os.path.exists(lock)


def test_concurrent_key_creation_yields_one_key(tmp_path):
    path, lock = str(tmp_path / "k.pem"), str(tmp_path / "lock")
    results = []
    threads = [threading.Thread(target=lambda: results.append(certificate.private_key(path, lock))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({r.spki_der() for r in results}) == 1


def test_certificate_fields_and_extensions(key):
    path, k = key
    cert = _build(k, _req())
    cn = cert.subject.get_attributes_for_oid(x509.oid.NameOID.COMMON_NAME)[0].value
    assert cn == "node-1.example.internal" and cert.issuer == cert.subject
    assert cert.version == x509.Version.v3
    assert cert.signature_hash_algorithm.name == "sha256"
    nb = getattr(cert, "not_valid_before_utc", None) or cert.not_valid_before.replace(tzinfo=timezone.utc)
    na = getattr(cert, "not_valid_after_utc", None) or cert.not_valid_after.replace(tzinfo=timezone.utc)
    assert (NOW - nb).total_seconds() == 15 * 60 and (na - NOW).total_seconds() == 3 * 3600
    ski = cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    assert ski == x509.SubjectKeyIdentifier.from_public_key(_crypto(path).public_key())
    cert.public_key().verify(cert.signature, cert.tbs_certificate_bytes, padding.PKCS1v15(), hashes.SHA256())
    assert all(not e.critical for e in cert.extensions)
    assert [e.oid.dotted_string for e in cert.extensions] == [
        "2.5.29.14", "1.3.6.1.4.1.4843.7.1", "1.3.6.1.4.1.4843.7.2", "1.3.6.1.4.1.4843.7.3", "1.3.6.1.4.1.4843.7.4"]
    assert _ext(cert, certificate.OID_ACCESS_POINT) == b"\x0c\x16" + AP.encode()
    assert _ext(cert, certificate.OID_FS_ID) == b"\x0c\x0b" + b"fs-deadbeef"
    assert _ext(cert, certificate.OID_CLIENT_INFO) == b"\x30\x0d\x0c\x03k8s\x0c\x061.36.0"
    auth = _ext(cert, certificate.OID_CLIENT_AUTH)
    sig = sigv4.signature(certificate.public_key_hash(k), CREDS.access_key, CREDS.secret_key, NOW, "us-east-1",
                          "fs-deadbeef", CREDS.token)
    inner = (b"\x0c\x0bAKIDEXAMPLE" + b"\x04\x40" + sig.encode() + b"\x17\x0d260501120000Z"
             + b"\xa0\x17\x0c\x15session-token-example")
    assert auth == b"\x30" + bytes([len(inner)]) + inner


def test_without_access_point_or_iam(key):
    _, k = key
    cert = _build(k, _req(access_point=None, credentials=None))
    assert [e.oid.dotted_string for e in cert.extensions] == ["2.5.29.14", "1.3.6.1.4.1.4843.7.3", "1.3.6.1.4.1.4843.7.4"]


def test_public_key_hash_is_sha1_of_spki_bit_string_content(key):
    path, k = key
    spki = _crypto(path).public_key().public_bytes(serialization.Encoding.DER,
                                                   serialization.PublicFormat.SubjectPublicKeyInfo)
    # SEQUENCE { SEQUENCE { rsaEncryption, NULL }, BIT STRING { 0x00 unused bits, RSAPublicKey } }
    idx = spki.index(b"\x03\x82", 4)  # the BIT STRING with a two-byte length
    length = int.from_bytes(spki[idx + 2:idx + 4], "big")
    content = spki[idx + 4:idx + 4 + length]
    assert content[0] == 0
    assert certificate.public_key_hash(k) == hashlib.sha1(content[1:]).hexdigest()


def test_extensions_equal_what_openssl_builds_from_the_136_config(key, tmp_path):
    """efs-utils 1.36 lets openssl encode the extensions from ASN1:... config lines; build the same
    config and compare DER bytes."""
    key_path, k = key
    token_line = "sessionToken = EXPLICIT:0,UTF8String:%s" % CREDS.token
    sig = sigv4.signature(certificate.public_key_hash(k), CREDS.access_key, CREDS.secret_key, NOW, "us-east-1",
                          "fs-deadbeef", CREDS.token)
    conf = tmp_path / "openssl.conf"
    conf.write_text("\n".join([
        "[ req ]", "prompt = no", "distinguished_name = dn", "x509_extensions = v3_ca", "",
        "[ dn ]", "CN = node-1.example.internal", "",
        "[ v3_ca ]", "subjectKeyIdentifier = hash",
        "1.3.6.1.4.1.4843.7.1 = ASN1:UTF8String:%s" % AP,
        "1.3.6.1.4.1.4843.7.2 = ASN1:SEQUENCE:efs_client_auth",
        "1.3.6.1.4.1.4843.7.3 = ASN1:UTF8String:fs-deadbeef",
        "1.3.6.1.4.1.4843.7.4 = ASN1:SEQUENCE:efs_client_info", "",
        "[ efs_client_auth ]", "accessKeyId = UTF8String:%s" % CREDS.access_key,
        "signature = OCTETSTRING:%s" % sig, "sigv4DateTime = UTCTIME:260501120000Z", token_line, "",
        "[ efs_client_info ]", "source = UTF8String:k8s", "efs_utils_version = UTF8String:1.36.0", ""]))
    out = tmp_path / "openssl.pem"
    subprocess.run(["openssl", "req", "-new", "-x509", "-key", key_path, "-config", str(conf), "-days", "1",
                    "-out", str(out)], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    theirs = x509.load_pem_x509_certificate(out.read_bytes())
    ours = _build(k, _req())
    for oid in (certificate.OID_ACCESS_POINT, certificate.OID_CLIENT_AUTH, certificate.OID_FS_ID,
                certificate.OID_CLIENT_INFO):
        assert _ext(ours, oid) == _ext(theirs, oid), oid.dotted_string
    assert ours.extensions.get_extension_for_class(x509.SubjectKeyIdentifier) == \
        theirs.extensions.get_extension_for_class(x509.SubjectKeyIdentifier)


def test_mount_directory_layout(key, tmp_path):
    key_path, k = key
    mount_dir = str(tmp_path / "fs-deadbeef.mnt.20100+")
    created = certificate.write_mount_certificate(mount_dir, key_path, k, _req(), now=NOW)
    assert created == "260501120000Z"
    assert certificate.parse_creation_time(created) == NOW
    for rel in ("certificate.pem", "publicKey.pem", "config.conf", "database/index.txt", "database/serial",
                "database/.rand", "certs"):
        assert os.path.exists(os.path.join(mount_dir, rel)), rel
    with open(os.path.join(mount_dir, "database", "index.txt.attr")) as f:
        assert f.read() == "unique_subject = no"
    # openssl agrees the certificate is well-formed and self-signed by the node key
    subprocess.run(["openssl", "verify", "-no_check_time", "-CAfile", os.path.join(mount_dir, "certificate.pem"),
                    os.path.join(mount_dir, "certificate.pem")], check=True, stdout=subprocess.DEVNULL)


def test_openssl_parses_our_der_like_its_own(key, tmp_path):
    """Independent parser: openssl x509 -text reads every field of the hand-built DER."""
    _, k = key
    path = tmp_path / "c.pem"
    from . import x509der
    path.write_bytes(x509der.pem(certificate.build_certificate(k, _req(), NOW)))
    text = subprocess.run(["openssl", "x509", "-in", str(path), "-noout", "-text"], check=True,
                          stdout=subprocess.PIPE).stdout.decode()
    assert "Version: 3 (0x2)" in text and "Signature Algorithm: sha256WithRSAEncryption" in text
    assert "Issuer: CN = node-1.example.internal" in text and "Subject: CN = node-1.example.internal" in text
    assert "Not Before: May  1 11:45:00 2026 GMT" in text and "Not After : May  1 15:00:00 2026 GMT" in text
    assert "Public-Key: (3072 bit)" in text and "X509v3 Subject Key Identifier" in text
    for oid in ("1.3.6.1.4.1.4843.7.1", "1.3.6.1.4.1.4843.7.2", "1.3.6.1.4.1.4843.7.3", "1.3.6.1.4.1.4843.7.4"):
        assert oid in text


def test_der_primitives():
    from . import der
    from datetime import datetime
    assert der.integer(0) == b"\x02\x01\x00" and der.integer(128) == b"\x02\x02\x00\x80"
    assert der.oid("1.2.840.113549.1.1.11") == bytes.fromhex("06092a864886f70d01010b")
    assert der.tlv(0x04, b"x" * 200)[:3] == b"\x04\x81\xc8"
    assert der.time_value(datetime(2049, 12, 31, 23, 59, 59))[:1] == b"\x17"
    assert der.time_value(datetime(2050, 1, 1)) == b"\x18\x0f20500101000000Z"


def test_libcrypto_and_cryptography_agree(key, monkeypatch):
    """The mount path signs through libcrypto; python3-cryptography is the fallback. PKCS#1 v1.5 signatures are
    deterministic, so both must give the same bytes, and the same public key."""
    path, k = key
    assert isinstance(k, libcrypto.RSAKey)  # libcrypto is usable on this machine (Debian 12, RHEL 9: OpenSSL 3)
    fallback = certificate.CryptographyKey(_crypto(path))
    assert k.spki_der() == fallback.spki_der()
    assert k.sign_sha256(b"tbs bytes") == fallback.sign_sha256(b"tbs bytes")
    # without libcrypto the same key loads through python3-cryptography
    monkeypatch.setattr(libcrypto, "load", lambda pem: None)
    again = certificate.private_key(path, path + ".lock")
    assert isinstance(again, certificate.CryptographyKey) and again.spki_der() == k.spki_der()


def test_libcrypto_refuses_what_it_must_not_read(tmp_path):
    assert libcrypto.load(b"not a key") is None
    ec_key = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    assert libcrypto.load(ec_key) is None
    with pytest.raises(FatalError, match="want an RSA key"):
        certificate.load_key(ec_key)
    encrypted = rsa.generate_private_key(public_exponent=65537, key_size=1024).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.BestAvailableEncryption(b"pw"))
    assert libcrypto.load(encrypted) is None  # never a passphrase prompt


def test_public_key_pem_is_what_openssl_writes(key, tmp_path):
    path, k = key
    mount_dir = str(tmp_path / "m+")
    certificate.write_mount_certificate(mount_dir, path, k, _req(), now=NOW)
    out = subprocess.run(["openssl", "rsa", "-in", path, "-outform", "PEM", "-pubout"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, check=True).stdout  # what 1.36 create_public_key runs
    with open(os.path.join(mount_dir, "publicKey.pem"), "rb") as f:
        assert f.read() == out
