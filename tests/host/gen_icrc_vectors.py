#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Generate the RoCEv2 ICRC test vectors used by the host tests.

This is an implementation of the ICRC that is independent of rust/proto/icrc.rs: it builds
packets field by field with `struct`, masks the variant fields as IBA Annex A17.8 describes and
computes the CRC with Python's `zlib.crc32`. Two packets come from outside this project and pin
the result (and the byte order of the ICRC on the wire) to other implementations: a CNP captured
from a ConnectX-4 Lx NIC and a UC SEND computed by Scapy, both from Scapy's RoCE regression tests
(test/contrib/roce.uts). The script refuses to emit anything if it does not reproduce them.

Usage, from tests/host:

    python3 gen_icrc_vectors.py | rustfmt --edition 2021 > src/icrc_vectors.rs
"""

import ipaddress
import struct
import zlib

ROCE_PORT = 4791
UDP_PROTO = 17


def ipv4_checksum(hdr):
    total = sum(struct.unpack("!10H", hdr))
    while total > 0xFFFF:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def ipv4_header(src, dst, payload_len, tos, ttl, ident, flags_frag=0x4000):
    hdr = struct.pack(
        "!BBHHHBBH4s4s",
        0x45,
        tos,
        20 + payload_len,
        ident,
        flags_frag,
        ttl,
        UDP_PROTO,
        0,
        ipaddress.IPv4Address(src).packed,
        ipaddress.IPv4Address(dst).packed,
    )
    return hdr[:10] + struct.pack("!H", ipv4_checksum(hdr)) + hdr[12:]


def ipv6_header(src, dst, payload_len, tclass, flow, hop):
    word0 = (6 << 28) | (tclass << 20) | flow
    return struct.pack(
        "!IHBB16s16s",
        word0,
        payload_len,
        UDP_PROTO,
        hop,
        ipaddress.IPv6Address(src).packed,
        ipaddress.IPv6Address(dst).packed,
    )


def udp_header(sport, length, checksum):
    return struct.pack("!HHHH", sport, ROCE_PORT, length, checksum)


def bth(opcode, dqpn, psn, se=0, mig=0, pad=0, pkey=0xFFFF, fecn=0, becn=0, resv6=0, ackreq=0):
    flags = (se << 7) | (mig << 6) | (pad << 4)
    word2 = (fecn << 31) | (becn << 30) | (resv6 << 24) | dqpn
    word3 = (ackreq << 31) | psn
    return struct.pack("!BBHII", opcode, flags, pkey, word2, word3)


def reth(va, rkey, length):
    return struct.pack("!QII", va, rkey, length)


def aeth(syndrome, msn):
    return struct.pack("!I", (syndrome << 24) | msn)


def deth(qkey, src_qpn):
    return struct.pack("!II", qkey, src_qpn)


def word(value):
    return struct.pack("!I", value)


def feth(selectivity, placement):
    return struct.pack("!I", (selectivity << 4) | placement)


def masked_ipv4(ip):
    # RFC 791 layout: TOS is byte 1, TTL byte 8, header checksum bytes 10-11.
    b = bytearray(ip)
    b[1] = 0xFF
    b[8] = 0xFF
    b[10:12] = b"\xff\xff"
    return bytes(b)


def masked_ipv6(ip):
    # RFC 8200 layout: the first word is version(4) | traffic class(8) | flow label(20).
    (word0,) = struct.unpack("!I", ip[:4])
    word0 = (word0 & 0xF0000000) | 0x0FFFFFFF
    b = bytearray(struct.pack("!I", word0) + ip[4:])
    b[7] = 0xFF  # hop limit
    return bytes(b)


def masked_udp(udp):
    return udp[:6] + b"\xff\xff"


def masked_transport(transport):
    # The third BTH word is FECN(1) BECN(1) resv6(6) DestQP(24); the top byte is masked.
    (word2,) = struct.unpack("!I", transport[4:8])
    return transport[:4] + struct.pack("!I", word2 | 0xFF000000) + transport[8:]


def icrc(masked_ip, udp, transport):
    return zlib.crc32(b"\xff" * 8 + masked_ip + masked_udp(udp) + masked_transport(transport))


def with_pad(payload):
    pad = -len(payload) % 4
    return payload + b"\x00" * pad, pad


def ipv4_vector(name, transport, payload_len, tos, ttl, ident, sport, udp_csum, src, dst):
    length = 8 + len(transport) + 4
    ip = ipv4_header(src, dst, length, tos, ttl, ident)
    udp = udp_header(sport, length, udp_csum)
    crc = icrc(masked_ipv4(ip), udp, transport)
    return (name, ip, udp, transport + struct.pack("<I", crc), crc, payload_len)


def ipv6_vector(name, transport, payload_len, tclass, flow, hop, sport, udp_csum, src, dst):
    length = 8 + len(transport) + 4
    ip = ipv6_header(src, dst, length, tclass, flow, hop)
    udp = udp_header(sport, length, udp_csum)
    crc = icrc(masked_ipv6(ip), udp, transport)
    return (name, ip, udp, transport + struct.pack("<I", crc), crc, payload_len)


def check_external_vectors():
    # CNP captured on a ConnectX-4 Lx (Scapy test/contrib/roce.uts), Ethernet header stripped.
    cnp = bytes.fromhex(
        "45c2003c718c400040119161 0a001101 0a001201"
        "000012b700280000"
        "8100ffff4000011800000000" + "00" * 16 + "82fd002a"
    )
    cnp_ip, cnp_udp, cnp_pkt = cnp[:20], cnp[20:28], cnp[28:]
    cnp_crc = icrc(masked_ipv4(cnp_ip), cnp_udp, cnp_pkt[:-4])
    assert struct.pack("<I", cnp_crc) == cnp_pkt[-4:], hex(cnp_crc)

    # UC SEND Only with pad count 2 whose ICRC Scapy computes as 0x78f353f3 (wire bytes in
    # Scapy's field order, so the value is their little-endian reading).
    payload = b"F0\x81\x8b\xe2\x895\xd9\x0e\x9a\x95PT\x01\xbe\x88^P\x00\x00"
    transport = bth(0x24, 211, 13571856, mig=1, pad=2) + payload
    ip = ipv4_header("192.168.0.7", "192.168.0.7", 44, 0x1, 64, 1144)
    assert ip[10:12] == b"\xb4\xd5"
    udp = udp_header(49152, 44, 0xACA2)
    crc = icrc(masked_ipv4(ip), udp, transport)
    assert struct.pack("<I", crc) == struct.pack("!I", 0x78F353F3), hex(crc)
    return [
        ("cnp_connectx4_capture", cnp_ip, cnp_udp, cnp_pkt, cnp_crc, None),
        ("scapy_uc_send_only", ip, udp, transport + struct.pack("<I", crc), crc, 18),
    ]


def ipv4_vectors():
    src, dst = "192.168.10.1", "192.168.10.2"
    send_payload, send_pad = with_pad(b"hello")
    write_payload = bytes(range(16))
    ud_payload, ud_pad = with_pad(b"datagra")
    return [
        ipv4_vector(
            "rc_ack",
            bth(0x11, 0x000012, 0x000100) + aeth(0x1F, 7),
            0, 0x00, 64, 0x1234, 0xC000, 0, src, dst,
        ),
        ipv4_vector(
            "rc_send_only_pad3",
            bth(0x04, 0xABCDEF, 0xFFFFFE, se=1, pad=send_pad, ackreq=1) + send_payload,
            5, 0x02, 63, 0x0001, 0xC123, 0, src, dst,
        ),
        ipv4_vector(
            "rc_write_only_imm_fecn_becn",
            bth(0x0B, 0x000345, 0x123456, fecn=1, becn=1, resv6=0x05, pkey=0x8001)
            + reth(0x00007F00DEADBEEF, 0x12345678, 16)
            + word(0xCAFEBABE)
            + write_payload,
            16, 0xB8, 1, 0xFFFF, 0xD00D, 0xBEEF, src, dst,
        ),
        ipv4_vector(
            "ud_send_only_imm_pad1",
            bth(0x65, 0x000001, 0x000000, pad=ud_pad) + deth(0x80010000, 1) + word(0x01020304)
            + ud_payload,
            7, 0x10, 255, 0x4242, 0xC001, 0x1234, "10.0.0.1", "10.0.0.2",
        ),
    ]


def ipv6_vectors():
    src, dst = "fe80::1", "2001:db8::42"
    inv_payload, inv_pad = with_pad(b"0123456789")
    return [
        ipv6_vector(
            "rc_read_request",
            bth(0x0C, 0x000011, 0x000200, ackreq=1) + reth(0x1000, 0xABCD, 4096),
            0, 0x00, 0x00000, 64, 0xC000, 0, src, dst,
        ),
        ipv6_vector(
            "rc_send_only_inv_pad2",
            bth(0x17, 0x00FFFE, 0xFFFFFF, se=1, pad=inv_pad) + word(0x00C0FFEE) + inv_payload,
            10, 0x68, 0x12345, 255, 0xC0DE, 0xFFFF, src, dst,
        ),
        ipv6_vector(
            "rc_atomic_ack",
            bth(0x12, 0x000077, 0x000042, becn=1) + aeth(0x00, 0x000009)
            + struct.pack("!Q", 0x0102030405060708),
            0, 0xFF, 0xFFFFF, 1, 0xC100, 0, src, dst,
        ),
        ipv6_vector(
            "uc_write_first",
            bth(0x26, 0x123456, 0x7FFFFF, mig=1) + reth(0xFFFF800000000000, 0x77, 64)
            + bytes(range(0x40, 0x60)),
            32, 0x0A, 0xABCDE, 17, 0xC200, 0x0001, src, dst,
        ),
        ipv6_vector(
            "rc_flush",
            bth(0x1C, 0x000100, 0x000001, ackreq=1) + feth(1, 3) + reth(0x2000, 0x99, 0),
            0, 0x20, 0x00001, 128, 0xC300, 0, src, dst,
        ),
    ]


def rust_bytes(data):
    return "[" + ", ".join("0x%02x" % b for b in data) + "]"


def rust_vector(kind, vector):
    name, ip, udp, packet, crc, payload_len = vector
    payload = "None" if payload_len is None else "Some(%d)" % payload_len
    return (
        "%s { name: %s, ip_hdr: %s, udp_hdr: %s, packet: &%s, icrc: 0x%08x, payload_len: %s },"
        % (kind, '"%s"' % name, rust_bytes(ip), rust_bytes(udp), rust_bytes(packet), crc, payload)
    )


def main():
    external = check_external_vectors()
    v4 = external + ipv4_vectors()
    v6 = ipv6_vectors()
    print("// SPDX-License-Identifier: GPL-2.0")
    print()
    print("//! ICRC test vectors, generated by `tests/host/gen_icrc_vectors.py`; do not edit.")
    print("//!")
    print("//! The script computes them independently of the Rust code, with `zlib.crc32` and its")
    print("//! own masking, after checking that it reproduces a hardware capture and Scapy.")
    print()
    print("/// An IPv4 RoCEv2 packet and its ICRC.")
    print("pub(crate) struct Ipv4Vector {")
    print("    /// What the packet is.")
    print("    pub(crate) name: &'static str,")
    print("    /// The IPv4 header as sent.")
    print("    pub(crate) ip_hdr: [u8; 20],")
    print("    /// The UDP header as sent.")
    print("    pub(crate) udp_hdr: [u8; 8],")
    print("    /// The transport packet from the BTH through the ICRC.")
    print("    pub(crate) packet: &'static [u8],")
    print("    /// The ICRC as a number, as `zlib.crc32` returns it.")
    print("    pub(crate) icrc: u32,")
    print("    /// The payload length, or `None` for an opcode the driver does not implement.")
    print("    pub(crate) payload_len: Option<usize>,")
    print("}")
    print()
    print("/// An IPv6 RoCEv2 packet and its ICRC.")
    print("pub(crate) struct Ipv6Vector {")
    print("    /// What the packet is.")
    print("    pub(crate) name: &'static str,")
    print("    /// The IPv6 header as sent.")
    print("    pub(crate) ip_hdr: [u8; 40],")
    print("    /// The UDP header as sent.")
    print("    pub(crate) udp_hdr: [u8; 8],")
    print("    /// The transport packet from the BTH through the ICRC.")
    print("    pub(crate) packet: &'static [u8],")
    print("    /// The ICRC as a number, as `zlib.crc32` returns it.")
    print("    pub(crate) icrc: u32,")
    print("    /// The payload length, or `None` for an opcode the driver does not implement.")
    print("    pub(crate) payload_len: Option<usize>,")
    print("}")
    print()
    print("/// IPv4 vectors; the first is a hardware capture and the second comes from Scapy.")
    print("pub(crate) const IPV4_VECTORS: &[Ipv4Vector] = &[")
    for vector in v4:
        print(rust_vector("Ipv4Vector", vector))
    print("];")
    print()
    print("/// IPv6 vectors.")
    print("pub(crate) const IPV6_VECTORS: &[Ipv6Vector] = &[")
    for vector in v6:
        print(rust_vector("Ipv6Vector", vector))
    print("];")


if __name__ == "__main__":
    main()
