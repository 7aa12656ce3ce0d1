"""The node key's two operations on the mount path, done by OpenSSL's libcrypto through ctypes.

A warm TLS mount needs the node key's public key and one SHA-256 RSA signature (PKCS#1 v1.5) over the
certificate. Importing python3-cryptography for that cost about a third of a whole mount.efs run; libcrypto
itself is already in the process (hashlib links it), so calling it directly costs nothing to load. OpenSSL
does the work (PEM parsing, blinded RSA, its own checks); this module only passes buffers. When libcrypto
cannot be used (another soname, a symbol missing, a key it cannot read) load() returns None and the caller
uses python3-cryptography instead.
"""

import ctypes
from typing import Optional

# OpenSSL 3 (RHEL 9, Debian 12), then 1.1.1; the symbols below exist in both.
SONAMES = ("libcrypto.so.3", "libcrypto.so.1.1")
EVP_PKEY_RSA = 6

_lib = None  # type: Optional[ctypes.CDLL]
_tried = False


def _bind(lib: ctypes.CDLL) -> None:
    p, c_int, c_size = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t
    sigs = {
        "BIO_new_mem_buf": (p, [p, c_int]),
        "BIO_free": (c_int, [p]),
        "PEM_read_bio_PrivateKey": (p, [p, p, p, p]),
        "EVP_PKEY_free": (None, [p]),
        "i2d_PUBKEY": (c_int, [p, ctypes.POINTER(ctypes.c_char_p)]),
        "EVP_MD_CTX_new": (p, []),
        "EVP_MD_CTX_free": (None, [p]),
        "EVP_sha256": (p, []),
        "EVP_DigestSignInit": (c_int, [p, p, p, p, p]),
        "EVP_DigestSign": (c_int, [p, ctypes.c_char_p, ctypes.POINTER(c_size), ctypes.c_char_p, c_size]),
        "ERR_clear_error": (None, []),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    # EVP_PKEY_base_id became a macro for EVP_PKEY_get_base_id in OpenSSL 3
    base_id = getattr(lib, "EVP_PKEY_get_base_id", None) or getattr(lib, "EVP_PKEY_base_id")
    base_id.restype, base_id.argtypes = c_int, [p]
    lib.efs_base_id = base_id


def library() -> Optional[ctypes.CDLL]:
    """library is libcrypto with the functions this module calls, or None when it cannot be used."""
    global _lib, _tried
    if not _tried:
        _tried = True
        for soname in SONAMES:
            try:
                lib = ctypes.CDLL(soname)
                _bind(lib)
            except (OSError, AttributeError):
                continue
            _lib = lib
            break
    return _lib


class RSAKey:
    """RSAKey is an RSA private key held by libcrypto (an EVP_PKEY)."""

    def __init__(self, lib: ctypes.CDLL, pkey: int):
        self._lib = lib
        self._pkey = pkey

    def __del__(self):
        if getattr(self, "_pkey", None):
            self._lib.EVP_PKEY_free(self._pkey)
            self._pkey = None

    def spki_der(self) -> bytes:
        """spki_der is the public key as a DER SubjectPublicKeyInfo."""
        n = self._lib.i2d_PUBKEY(self._pkey, None)
        if n <= 0:
            raise OSError("libcrypto: i2d_PUBKEY failed")
        buf = ctypes.create_string_buffer(n)
        out = ctypes.c_char_p(ctypes.addressof(buf))
        if self._lib.i2d_PUBKEY(self._pkey, ctypes.byref(out)) != n:
            raise OSError("libcrypto: i2d_PUBKEY failed")
        return buf.raw

    def sign_sha256(self, data: bytes) -> bytes:
        """sign_sha256 is the PKCS#1 v1.5 signature of SHA-256(data)."""
        lib = self._lib
        ctx = lib.EVP_MD_CTX_new()
        if not ctx:
            raise MemoryError("libcrypto: EVP_MD_CTX_new failed")
        try:
            size = ctypes.c_size_t(0)
            if lib.EVP_DigestSignInit(ctx, None, lib.EVP_sha256(), None, self._pkey) != 1 or \
                    lib.EVP_DigestSign(ctx, None, ctypes.byref(size), data, len(data)) != 1:
                lib.ERR_clear_error()
                raise OSError("libcrypto: EVP_DigestSign setup failed")
            sig = ctypes.create_string_buffer(size.value)
            if lib.EVP_DigestSign(ctx, sig, ctypes.byref(size), data, len(data)) != 1:
                lib.ERR_clear_error()
                raise OSError("libcrypto: EVP_DigestSign failed")
            return sig.raw[:size.value]
        finally:
            lib.EVP_MD_CTX_free(ctx)


def load(pem: bytes) -> Optional[RSAKey]:
    """load reads an unencrypted PEM RSA private key (PKCS#8 or PKCS#1); None when libcrypto is not usable
    or does not read it as an RSA key."""
    lib = library()
    if lib is None or b"ENCRYPTED" in pem:  # never let OpenSSL prompt for a passphrase
        return None
    bio = lib.BIO_new_mem_buf(pem, len(pem))
    if not bio:
        return None
    try:
        pkey = lib.PEM_read_bio_PrivateKey(bio, None, None, None)
    finally:
        lib.BIO_free(bio)
    if not pkey:
        lib.ERR_clear_error()
        return None
    if lib.efs_base_id(pkey) != EVP_PKEY_RSA:
        lib.EVP_PKEY_free(pkey)
        return None
    return RSAKey(lib, pkey)
