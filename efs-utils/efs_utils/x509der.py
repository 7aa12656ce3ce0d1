"""The DER of the client certificate, built by hand so the mount path needs only python3-cryptography's
RSA signing (importing cryptography.x509 costs tens of milliseconds per mount on a small node)."""

import base64
import os
from datetime import datetime
from typing import List, NamedTuple, Tuple

from . import der

OID_COMMON_NAME = "2.5.4.3"
OID_SHA256_WITH_RSA = "1.2.840.113549.1.1.11"
OID_SUBJECT_KEY_IDENTIFIER = "2.5.29.14"


class TBS(NamedTuple):
    """TBS is what the certificate says: a self-signed certificate has issuer == subject."""

    common_name: str
    spki_der: bytes
    not_before: datetime
    not_after: datetime
    extensions: List[Tuple[str, bytes]]  # (dotted OID, DER of the extension value), all non-critical


def name(common_name: str) -> bytes:
    return der.sequence([der.set_of([der.sequence([der.oid(OID_COMMON_NAME), der.utf8_string(common_name)])])])


def serial_number() -> int:
    """serial_number is a random positive 159-bit serial (RFC 5280 allows up to 20 octets)."""
    return int.from_bytes(os.urandom(20), "big") >> 1 or 1


def algorithm() -> bytes:
    return der.sequence([der.oid(OID_SHA256_WITH_RSA), der.null()])


def tbs_certificate(t: TBS, serial: int) -> bytes:
    exts = der.sequence([der.sequence([der.oid(o), der.octet_string(v)]) for o, v in t.extensions])
    return der.sequence([
        der.explicit(0, der.integer(2)),  # v3
        der.integer(serial),
        algorithm(),
        name(t.common_name),
        der.sequence([der.time_value(t.not_before), der.time_value(t.not_after)]),
        name(t.common_name),
        t.spki_der,
        der.explicit(3, exts),
    ])


def certificate(tbs: bytes, signature: bytes) -> bytes:
    return der.sequence([tbs, algorithm(), der.bit_string(signature)])


def pem(der_bytes: bytes, label: str = "CERTIFICATE") -> bytes:
    """pem wraps DER as OpenSSL writes it: base64 in lines of 64 between BEGIN and END lines."""
    body = base64.b64encode(der_bytes)
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    tag = label.encode()
    return b"-----BEGIN " + tag + b"-----\n" + b"\n".join(lines) + b"\n-----END " + tag + b"-----\n"
