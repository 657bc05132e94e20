#!/usr/bin/env python3
"""Sets bytes of a plan file and recomputes its checksum, as an adversary
would (issue #39): the result still reads as a plan unless what the bytes
mean is checked.

    scripts/plan_poke.py IN OUT OFFSET=VALUE [OFFSET=VALUE ...]

OFFSET is a 0-based byte offset into the whole file (header included), or
@TEXT+N: N bytes past the start of TEXT's first occurrence (an attribute's
name; its value starts 1 byte past the name's end, after the kind byte),
so that a test need not know where a plan puts it. VALUE is a byte (0-255);
numbers take 0x. The header's payload size and the trailing
FNV-1a-64 checksum of the payload are written to fit (Plan.h's layout:
magic | u32 version | u64 payload bytes | payload | u64 checksum).
"""
import struct
import sys

HEADER, TRAILER = 8 + 4 + 8, 8


def fnv1a(data: bytes) -> int:
    # DiskCache.h's fnv1a, whose default basis is 1469598103934665603 (not
    # FNV's 14695981039346656037): the plan files' checksum uses it as is.
    h = 1469598103934665603
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__.strip())
    data = bytearray(open(argv[1], 'rb').read())
    if len(data) < HEADER + TRAILER or data[:8] != b'DLCPLAN\n':
        sys.exit(f'plan_poke: {argv[1]} is not a plan file')
    for edit in argv[3:]:
        offset, _, value = edit.partition('=')
        if offset.startswith('@'):
            text, _, skip = offset[1:].rpartition('+')
            at = bytes(data).find(text.encode())
            if at < 0:
                sys.exit(f'plan_poke: {text!r} is not in {argv[1]}')
            offset = str(at + int(skip, 0))
        offset, value = int(offset, 0), int(value, 0)
        if not HEADER <= offset < len(data) - TRAILER or not 0 <= value <= 255:
            sys.exit(f'plan_poke: {edit}: the offset must be in the payload '
                     f'[{HEADER}, {len(data) - TRAILER}) and the value a byte')
        data[offset] = value
    payload = len(data) - HEADER - TRAILER
    data[12:20] = struct.pack('<Q', payload)
    data[HEADER + payload:] = struct.pack('<Q', fnv1a(bytes(data[HEADER:HEADER + payload])))
    open(argv[2], 'wb').write(data)


if __name__ == '__main__':
    main(sys.argv)
