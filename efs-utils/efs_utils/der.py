"""A minimal DER encoder for the EFS client-certificate extensions (X.690)."""

from typing import Iterable


def _length(n: int) -> bytes:
    if n < 0x80:
        return bytes([n])
    body = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(body)]) + body


def tlv(tag: int, content: bytes) -> bytes:
    """tlv encodes one element with a single-byte tag."""
    return bytes([tag]) + _length(len(content)) + content


def utf8_string(text: str) -> bytes:
    return tlv(0x0C, text.encode("utf-8"))


def octet_string(data: bytes) -> bytes:
    return tlv(0x04, data)


def utc_time(text: str) -> bytes:
    """utc_time encodes an already formatted YYMMDDHHMMSSZ string."""
    return tlv(0x17, text.encode("ascii"))


def sequence(items: Iterable[bytes]) -> bytes:
    return tlv(0x30, b"".join(items))


def explicit(tag_number: int, inner: bytes) -> bytes:
    """explicit wraps inner in a constructed context-specific tag [n] EXPLICIT."""
    return tlv(0xA0 | tag_number, inner)
