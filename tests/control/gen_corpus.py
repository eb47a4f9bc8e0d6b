#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the malformed-message corpus of tests/control/corpus (one frame per file).

File names are NN-EXPECT-what.bin: EXPECT is the "err" xferd must answer with (ok for a
success, drop when the connection is dropped without an answer). The corpus also seeds the
fuzz target. Requests carry workflow "w" and the token below (test_corpus writes both).
Regenerate with: python3 tests/control/gen_corpus.py tests/control/corpus
"""
import os
import struct
import sys

WF = "w"
TOK = "corpus-token-0123456789abcdef"


def pack(o):
    """Minimal MessagePack packer (dicts keep their order; lists of pairs are maps too)."""
    if o is None:
        return b"\xc0"
    if o is True:
        return b"\xc3"
    if o is False:
        return b"\xc2"
    if isinstance(o, int):
        if 0 <= o < 128:
            return bytes([o])
        if -32 <= o < 0:
            return struct.pack("b", o)
        if 0 <= o < 2**64:
            return b"\xcf" + struct.pack(">Q", o)
        return b"\xd3" + struct.pack(">q", o)
    if isinstance(o, float):
        return b"\xcb" + struct.pack(">d", o)
    if isinstance(o, str):
        return pack_str(o.encode())
    if isinstance(o, bytes):
        return b"\xc6" + struct.pack(">I", len(o)) + o
    if isinstance(o, list):
        head = bytes([0x90 | len(o)]) if len(o) < 16 else b"\xdd" + struct.pack(">I", len(o))
        return head + b"".join(pack(x) for x in o)
    if isinstance(o, (dict, Pairs)):
        items = list(o.items())
        head = bytes([0x80 | len(items)]) if len(items) < 16 else b"\xdf" + struct.pack(">I", len(items))
        return head + b"".join(pack(k) + pack(v) for k, v in items)
    raise TypeError(o)


def pack_str(b):
    if len(b) < 32:
        return bytes([0xA0 | len(b)]) + b
    return b"\xdb" + struct.pack(">I", len(b)) + b


class Pairs:
    """A map given as a list of (key, value): duplicate and non-string keys allowed."""

    def __init__(self, pairs):
        self.pairs = pairs

    def items(self):
        return self.pairs


def req(op, **fields):
    m = {"v": 1, "op": op, "id": 7, "wf": WF, "tok": TOK}
    m.update(fields)
    return m


STEP = dict(session=1, channel="c", side=0, step=0, bytes=8)

CASES = [
    ("protocol", "not-msgpack", b"hello, xferd"),
    ("protocol", "empty", b""),
    ("protocol", "reserved-byte", b"\xc1"),
    ("protocol", "array-top-level", pack([1, 2, 3])),
    ("protocol", "int-top-level", pack(42)),
    ("protocol", "huge-str-length", b"\x81" + pack("op") + b"\xdb\xff\xff\xff\xff" + b"x"),
    ("protocol", "huge-list-length", b"\x81" + pack("l") + b"\xdd\xff\xff\xff\xff\x80"),
    ("protocol", "huge-map-length", b"\xdf\xff\xff\xff\xff" + pack("v") + pack(1)),
    ("protocol", "deep-nesting", pack(dict(req("status"), l=[{"m": [{"x": 1}]}]))),
    ("protocol", "map-in-map", pack(dict(req("status"), m={"a": 1}))),
    ("protocol", "list-of-ints", pack(dict(req("status"), l=[1, 2]))),
    ("protocol", "33-fields", pack(dict(req("status"), **{"f%02d" % i: i for i in range(28)}))),
    ("protocol", "nil-value", pack(dict(req("status"), x=None))),
    ("protocol", "key-too-long", pack(dict(req("status"), **{"k" * 33: 1}))),
    ("protocol", "empty-key", pack(dict(req("status"), **{"": 1}))),
    ("protocol", "int-key", pack(Pairs(list(req("status").items()) + [(5, 1)]))),
    ("protocol", "duplicate-key", pack(Pairs(list(req("status").items()) + [("op", "stop")]))),
    ("protocol", "nul-in-string", pack(dict(req("status"), x="a\0b"))),
    ("protocol", "nul-in-key", pack(dict(req("status"), **{"a\0b": 1}))),
    ("protocol", "bin-value", pack(dict(req("status"), x=b"bytes"))),
    ("protocol", "ext-value", b"\x86" + b"".join(pack(k) + pack(v) for k, v in req("status").items()) + pack("x") + b"\xd4\x01\x02"),
    ("protocol", "trailing-bytes", pack(req("status")) + b"\x00"),
    ("protocol", "truncated", pack(req("register", component="a", nprocs=1, pid=1, host="h"))[:-3]),
    ("protocol", "string-1025", pack(dict(req("status"), x="s" * 1025))),
    ("protocol", "list-8193", pack(dict(req("status"), l=[{}] * 8193))),
    ("protocol", "uint64-too-big", pack(dict(req("status"), x=2**64 - 1))),
    ("version", "v2", pack(dict(req("status"), v=2))),
    ("version", "v0", pack(dict(req("status"), v=0))),
    ("protocol", "v-missing", pack({k: v for k, v in req("status").items() if k != "v"})),
    ("protocol", "v-string", pack(dict(req("status"), v="1"))),
    ("protocol", "op-missing", pack({k: v for k, v in req("status").items() if k != "op"})),
    ("protocol", "op-int", pack(dict(req("status"), op=3))),
    ("denied", "no-token", pack({k: v for k, v in req("status").items() if k != "tok"})),
    ("denied", "wrong-token", pack(dict(req("status"), tok="corpus-token-0123456789abcdeX"))),
    ("denied", "short-token", pack(dict(req("status"), tok="c"))),
    ("denied", "wrong-workflow", pack(dict(req("status"), wf="other"))),
    ("protocol", "unknown-op", pack(req("launch"))),
    ("protocol", "id-negative", pack(dict(req("status"), id=-5))),
    ("protocol", "id-missing", pack({k: v for k, v in req("status").items() if k != "id"})),
    ("protocol", "step-negative", pack(req("step", **dict(STEP, step=-1)))),
    ("protocol", "side-2", pack(req("step", **dict(STEP, side=2)))),
    ("protocol", "bytes-negative", pack(req("step", **dict(STEP, bytes=-1)))),
    ("protocol", "wait-negative", pack(req("lookup", session=1, channel="c", wait_ms=-1))),
    ("protocol", "nprocs-zero", pack(req("register", component="a", nprocs=0, pid=1, host="h"))),
    ("protocol", "nprocs-float", pack(req("register", component="a", nprocs=1.0, pid=1, host="h"))),
    ("protocol", "session-string", pack(req("heartbeat", session="1"))),
    ("protocol", "reply-as-request", pack(req("reply", ok=True))),
    ("protocol", "notice-as-request", pack(req("shutdown", reason="x"))),
    ("unknown", "unknown-session", pack(req("heartbeat", session=123456))),
    ("unknown", "unknown-component", pack(req("register", component="zz", nprocs=1, pid=1, host="h"))),
    ("unknown", "exited-unknown", pack(req("exited", component="zz", code=1))),
    ("ok", "status", pack(req("status"))),
    ("ok", "status-extra-fields", pack(dict(req("status"), future=1.5, flag=True, l=[{"a": 1}]))),
    ("drop", "oversize-70k", pack(dict(req("status"), **{"s%02d" % i: "x" * 1024 for i in range(27)},
                                      l=[{"a": "y" * 1000} for _ in range(45)]))),
]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus")
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        if f.endswith(".bin"):
            os.remove(os.path.join(out, f))
    for i, (expect, what, data) in enumerate(CASES):
        with open(os.path.join(out, "%02d-%s-%s.bin" % (i, expect, what)), "wb") as f:
            f.write(data)
    print("%d files in %s" % (len(CASES), out))


if __name__ == "__main__":
    main()
