"""Bot uploads: single files, folders, examples, and zip archives that are refused."""

from __future__ import annotations

import io
import random
import stat
import struct
import zipfile
import zlib
from pathlib import Path

import pytest

from bots.runner import botfiles
from bots.runner.botfiles import BadBot, load_bot, source_from_upload


def make_zip(entries: dict[str, bytes], *, symlink: str | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
        if symlink:
            info = zipfile.ZipInfo(symlink)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, "/etc/passwd")
    return buffer.getvalue()


def test_examples_files_and_folders_load(tmp_path: Path) -> None:
    assert set(botfiles.example_names()) >= {"random", "greedy", "strong"}
    assert "bot.py" in load_bot("greedy").files
    single = tmp_path / "mine.py"
    single.write_text("print('hi')\n")
    assert load_bot(single).files == {"bot.py": b"print('hi')\n"}
    folder = tmp_path / "pkg"
    (folder / "lib").mkdir(parents=True)
    (folder / "bot.py").write_text("import lib.helper\n")
    (folder / "lib" / "helper.py").write_text("X = 1\n")
    assert set(load_bot(folder).files) == {"bot.py", "lib/helper.py"}


def test_a_zip_with_modules_loads() -> None:
    data = make_zip({"bot.py": b"import helper\n", "helper.py": b"X = 1\n", "sub/": b""})
    source = source_from_upload("z", "z.zip", data)
    assert set(source.files) == {"bot.py", "helper.py"}


@pytest.mark.parametrize(
    ("entries", "symlink", "reason"),
    [
        ({"../evil.py": b"x", "bot.py": b""}, None, "outside the archive"),
        ({"/abs.py": b"x", "bot.py": b""}, None, "outside the archive"),
        ({"helper.py": b"x"}, None, "no entry file"),
        ({"bot.py": b""}, "link", "symbolic link"),
        ({"bot.py": b"\0" * (4 << 20)}, None, "zip bomb"),
    ],
)
def test_unsafe_zips_are_refused_with_a_reason(
    entries: dict[str, bytes], symlink: str | None, reason: str
) -> None:
    with pytest.raises(BadBot, match=reason):
        source_from_upload("z", "z.zip", make_zip(entries, symlink=symlink))


def test_other_bad_uploads_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(BadBot, match="not a valid zip"):
        source_from_upload("z", "z.zip", b"PK\x03\x04 not really")
    with pytest.raises(BadBot, match="not UTF-8"):
        source_from_upload("b", "b.py", b"\xff\xfe")
    with pytest.raises(BadBot, match="limit"):
        source_from_upload("b", "b.py", b"#" * (botfiles.MAX_FILE_BYTES + 1))
    with pytest.raises(BadBot, match="a single source file or an executable"):
        source_from_upload("b", "b.exe", b"MZ")
    with pytest.raises(BadBot, match="not an example bot"):
        load_bot(tmp_path / "missing.py")


def test_a_zip_over_the_size_limit_is_refused_before_it_is_opened() -> None:
    # Incompressible content, so the archive itself is over the limit.
    data = make_zip({"bot.py": b"", "blob.bin": random.Random(1).randbytes(botfiles.MAX_ZIP_BYTES)})
    assert len(data) > botfiles.MAX_ZIP_BYTES
    with pytest.raises(BadBot, match=f"the limit is {botfiles.MAX_ZIP_BYTES}$"):
        source_from_upload("z", "z.zip", data)
    assert botfiles.upload_limit("z.zip") == botfiles.MAX_ZIP_BYTES
    assert botfiles.upload_limit("z.py") == botfiles.MAX_FILE_BYTES


def test_a_zip_with_too_many_entries_is_refused() -> None:
    entries = {f"m{i}.py": b"" for i in range(botfiles.MAX_MEMBERS)} | {"bot.py": b""}
    with pytest.raises(BadBot, match=f"{botfiles.MAX_MEMBERS + 1} entries; the limit is"):
        source_from_upload("z", "z.zip", make_zip(entries))
    # One fewer is fine: the limit is the limit, not one below it.
    del entries["m0.py"]
    assert len(source_from_upload("z", "z.zip", make_zip(entries)).files) == botfiles.MAX_MEMBERS


def test_a_zip_that_unpacks_to_too_much_in_total_is_refused() -> None:
    """Members small enough each to pass the zip bomb check, too many bytes together."""
    size = 1 << 16
    count = botfiles.MAX_UNPACKED_BYTES // size + 1
    entries = {"bot.py": b""} | {f"data/{i}.bin": b"\0" * size for i in range(count)}
    data = make_zip(entries)
    assert len(data) < botfiles.MAX_ZIP_BYTES and len(entries) <= botfiles.MAX_MEMBERS
    with pytest.raises(BadBot, match=f"unpacks to more than {botfiles.MAX_UNPACKED_BYTES} bytes"):
        source_from_upload("z", "z.zip", data)
    del entries["data/0.bin"]
    assert len(source_from_upload("z", "z.zip", make_zip(entries)).files) == count


def declare_size(data: bytes, member: str, size: int, *, crc_of: bytes | None = None) -> bytes:
    """`data` (a zip) with `member`'s uncompressed size (and optionally its CRC-32, of
    `crc_of`) rewritten in its local header and in the central directory: a lying archive."""
    raw = bytearray(data)
    name = member.encode()
    for signature, size_at, crc_at, name_at in ((b"PK\3\4", 22, 14, 30), (b"PK\1\2", 24, 16, 46)):
        at = raw.find(signature)
        while raw[at + name_at : at + name_at + len(name)] != name:
            at = raw.find(signature, at + 1)
        struct.pack_into("<I", raw, at + size_at, size)
        if crc_of is not None:
            struct.pack_into("<I", raw, at + crc_at, zlib.crc32(crc_of))
    return bytes(raw)


@pytest.mark.parametrize("method", [zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED])
def test_a_member_that_lies_about_its_size_is_refused(method: int) -> None:
    body = b"x = 1\n" * 10_000  # under 64 KiB: no ratio check, the size alone must tell
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        archive.writestr("helper.py", body)
        archive.writestr("bot.py", b"import helper\n")
    honest = buffer.getvalue()
    assert source_from_upload("z", "z.zip", honest).files["helper.py"] == body

    # It says it is small and hides more (which would slip past the limits above).
    with pytest.raises(BadBot, match=r"'helper\.py' does not match its declared size"):
        source_from_upload("z", "z.zip", declare_size(honest, "helper.py", 100))
    # It says it is larger than it is.
    with pytest.raises(BadBot, match=r"'helper\.py' does not match its declared size"):
        source_from_upload("z", "z.zip", declare_size(honest, "helper.py", len(body) + 1))
    # Even with a CRC that matches its declared part, nothing past it is decompressed.
    lying = declare_size(honest, "helper.py", 100, crc_of=body[:100])
    assert source_from_upload("z", "z.zip", lying).files["helper.py"] == body[:100]


def _zip_raw(names: list[str]) -> bytes:
    """A zip whose entries are named exactly so (zipfile would keep duplicates and odd names)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("bot.py", b"pass\n")
        for name in names:
            archive.writestr(zipfile.ZipInfo(name), b"x")
    return buffer.getvalue()


@pytest.mark.filterwarnings("ignore:Duplicate name")
@pytest.mark.parametrize(
    ("names", "reason"),
    [
        (["a", "a/b"], "is both a file and the folder of"),
        (["bot.py/x"], "is both a file and the folder of"),
        (["lib/a", "lib/a/b/c"], "is both a file and the folder of"),
        (["."], "an empty or '.' part"),
        (["./helper.py"], "an empty or '.' part"),
        (["a//b"], "an empty or '.' part"),
        (["x" * 300], "a name longer than 255 bytes"),
        (["é" * 200], "a name longer than 255 bytes"),
        (["/".join(["d" * 200] * 20)], "longer than 1024 bytes"),
        (["/".join("d" * 17) + "/f"], "nested deeper than 16 folders"),
        (["helper.py", "helper.py"], "appears twice"),
        (["a\x01b"], "control character"),
    ],
    ids=lambda v: v if isinstance(v, str) else repr(v)[:30],
)
def test_zips_that_cannot_be_staged_are_refused_naming_the_entry(
    names: list[str], reason: str
) -> None:
    """Each of these passed the old checks and then failed when staged, leaking the box."""
    with pytest.raises(BadBot, match=reason):
        source_from_upload("z", "z.zip", _zip_raw(names))


def test_check_tree_accepts_ordinary_trees() -> None:
    botfiles.check_tree("t", {"bot.py": b"", "lib/a.py": b"", "lib/b/c.py": b"", "a.b": b""})
    botfiles.check_tree("t", {"/".join("d" * 16) + "/f": b""})
