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


def integer(value: int) -> bytes:
    """integer encodes a non-negative INTEGER (minimal two's complement)."""
    body = value.to_bytes(max(1, (value.bit_length() + 8) // 8), "big")
    return tlv(0x02, body)


def oid(dotted: str) -> bytes:
    arcs = [int(a) for a in dotted.split(".")]
    body = bytearray([40 * arcs[0] + arcs[1]])
    for arc in arcs[2:]:
        chunk = [arc & 0x7F]
        arc >>= 7
        while arc:
            chunk.append(0x80 | (arc & 0x7F))
            arc >>= 7
        body.extend(reversed(chunk))
    return tlv(0x06, bytes(body))


def null() -> bytes:
    return b"\x05\x00"


def bit_string(data: bytes) -> bytes:
    """bit_string encodes whole octets (no unused bits)."""
    return tlv(0x03, b"\x00" + data)


def set_of(items: Iterable[bytes]) -> bytes:
    return tlv(0x31, b"".join(sorted(items)))


def time_value(when) -> bytes:
    """time_value is UTCTime before 2050 and GeneralizedTime from then on (RFC 5280 4.1.2.5)."""
    if when.year < 2050:
        return tlv(0x17, when.strftime("%y%m%d%H%M%SZ").encode("ascii"))
    return tlv(0x18, when.strftime("%Y%m%d%H%M%SZ").encode("ascii"))
