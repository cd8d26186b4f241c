"""Near-identical bot sources (issue 33): two owners' bots whose code is nearly the same are one
author's, or one copied from the other; either way staff should look. Pure functions.

A source is reduced to its tokens (comments and layout dropped, so reformatting changes
nothing) and then to the set of its overlapping runs of SHINGLE tokens, hashed; two sources'
similarity is the Jaccard index of those sets (1.0: the same code). Renaming every variable
lowers it, but a copy that keeps its logic keeps most runs of keywords and punctuation.
"""

from __future__ import annotations

import io
import re
import zipfile
import zlib

SHINGLE = 5
"""Tokens per run compared."""
SIMILAR = 0.8
"""A pair of sources this similar is listed for staff."""
MAX_BYTES = 1 << 20
"""Text read from one source (an archive's members together): enough for any real bot."""

_COMMENT = re.compile(rb"#[^\n]*|//[^\n]*|/\*.*?\*/", re.DOTALL)
_TOKEN = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*|\d+|\S")


def source_text(data: bytes) -> bytes:
    """A version's file as text: a zip's text members, in name order, joined; else the file."""
    if data[:4] == b"PK\x03\x04":
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                parts = []
                left = MAX_BYTES
                for info in sorted(archive.infolist(), key=lambda i: i.filename):
                    if info.is_dir() or left <= 0:
                        continue
                    with archive.open(info) as member:
                        parts.append(member.read(left))
                    left -= len(parts[-1])
                return b"\n".join(parts)
        except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError):
            return data[:MAX_BYTES]
    return data[:MAX_BYTES]


def shingles(text: bytes) -> frozenset[int]:
    """The hashed runs of SHINGLE tokens of a source, comments and layout left out."""
    tokens = _TOKEN.findall(_COMMENT.sub(b" ", text))
    if len(tokens) < SHINGLE:
        return frozenset([zlib.crc32(b"\0".join(tokens))]) if tokens else frozenset()
    return frozenset(
        zlib.crc32(b"\0".join(tokens[i : i + SHINGLE])) for i in range(len(tokens) - SHINGLE + 1)
    )


def similarity(a: frozenset[int], b: frozenset[int]) -> float:
    """Jaccard index of two sources' shingles: 1.0 the same code, 0.0 nothing shared."""
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)
