"""The SigV4 signature efs-utils puts in the client certificate for the "iam" option.

It follows efs-utils 1.36 byte for byte, including its canonical request, which has no blank
line between the header block and the signed-headers line.
"""

import hashlib
import hmac
from datetime import datetime
from typing import Optional
from urllib.parse import quote_plus

ALGORITHM = "AWS4-HMAC-SHA256"
SERVICE = "elasticfilesystem"
DATETIME_FORMAT = "%Y%m%dT%H%M%SZ"
DATE_FORMAT = "%Y%m%d"
EXPIRES = 86400
EMPTY_PAYLOAD_SHA256 = hashlib.sha256(b"").hexdigest()


def credential_scope(date: datetime, region: str) -> str:
    return "/".join([date.strftime(DATE_FORMAT), region, SERVICE, "aws4_request"])


def canonical_query(public_key_hash: str, access_key: str, date: datetime, region: str,
                    session_token: Optional[str] = None) -> str:
    """canonical_query is the sorted query string of the Connect request."""
    params = {
        "Action": "Connect",
        "PublicKeyHash": quote_plus(public_key_hash),
        "X-Amz-Algorithm": ALGORITHM,
        "X-Amz-Credential": quote_plus(access_key + "/" + credential_scope(date, region)),
        "X-Amz-Date": quote_plus(date.strftime(DATETIME_FORMAT)),
        "X-Amz-Expires": str(EXPIRES),
        "X-Amz-SignedHeaders": "host",
    }
    if session_token:
        params["X-Amz-Security-Token"] = quote_plus(session_token)
    return "&".join("%s=%s" % (k, params[k]) for k in sorted(params))


def canonical_request(public_key_hash: str, access_key: str, date: datetime, region: str,
                      fs_id: str, session_token: Optional[str] = None) -> str:
    return "\n".join([
        "GET",
        "/",
        canonical_query(public_key_hash, access_key, date, region, session_token),
        "host:%s" % fs_id,
        "host",
        EMPTY_PAYLOAD_SHA256,
    ])


def string_to_sign(request: str, date: datetime, region: str) -> str:
    return "\n".join([
        ALGORITHM,
        date.strftime(DATETIME_FORMAT),
        credential_scope(date, region),
        hashlib.sha256(request.encode("utf-8")).hexdigest(),
    ])


def _hmac(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode("utf-8"), hashlib.sha256).digest()


def signing_key(secret_key: str, date: datetime, region: str, service: str = SERVICE) -> bytes:
    """signing_key is the standard SigV4 key derivation (for the elasticfilesystem service by default)."""
    k_date = _hmac(("AWS4" + secret_key).encode("utf-8"), date.strftime(DATE_FORMAT))
    k_region = _hmac(k_date, region)
    k_service = _hmac(k_region, service)
    return _hmac(k_service, "aws4_request")


def signature(public_key_hash: str, access_key: str, secret_key: str, date: datetime, region: str,
              fs_id: str, session_token: Optional[str] = None) -> str:
    """signature is the hex SigV4 signature of the Connect request for fs_id."""
    request = canonical_request(public_key_hash, access_key, date, region, fs_id, session_token)
    to_sign = string_to_sign(request, date, region)
    return hmac.new(signing_key(secret_key, date, region), to_sign.encode("utf-8"),
                    hashlib.sha256).hexdigest()
