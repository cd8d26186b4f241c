"""Which language an upload is: its entry file, or a manifest when there are several; what is
refused, with a message listing what is accepted."""

from __future__ import annotations

import json
import struct

import pytest

from bots.runner.botfiles import BadBot, source_from_upload
from bots.runner.languages import LANGUAGES, check_static_binary, check_upload, detect


@pytest.mark.parametrize(
    ("files", "language"),
    [
        ({"bot.py": b""}, "python"),
        ({"bot.js": b""}, "javascript"),
        ({"bot.cpp": b"", "util.cpp": b""}, "cpp"),
        ({"Cargo.toml": b"", "src/main.rs": b""}, "rust"),
        ({"main.rs": b""}, "rust"),
        ({"Bot.java": b"", "Helper.java": b""}, "java"),
    ],
)
def test_the_entry_file_says_the_language(files: dict[str, bytes], language: str) -> None:
    assert detect(files).name == language


def test_an_upload_with_two_entries_is_refused_unless_a_manifest_says() -> None:
    both = {"bot.py": b"", "bot.js": b""}
    with pytest.raises(BadBot, match=r"more than one language's entry file: python \(bot.py\), "):
        detect(both)
    manifest = json.dumps({"language": "javascript"}).encode()
    assert detect({**both, "grass.json": manifest}).name == "javascript"
    with pytest.raises(BadBot, match="unknown language 'cobol'"):
        detect({**both, "grass.json": b'{"language": "cobol"}'})
    with pytest.raises(BadBot, match=r"there is no bot\.cpp"):
        detect({**both, "grass.json": b'{"language": "cpp"}'})
    with pytest.raises(BadBot, match="must be a JSON object"):
        detect({**both, "grass.json": b"[" * 10_000})


def test_an_unknown_upload_lists_what_is_accepted() -> None:
    with pytest.raises(BadBot) as refused:
        detect({"README.md": b"", "solve.go": b""})
    for lang in LANGUAGES.values():
        assert lang.name in str(refused.value)
    with pytest.raises(BadBot, match="single source file or an executable"):
        source_from_upload("x", "bot.go", b"package main")


def test_single_files_become_entry_files() -> None:
    assert source_from_upload("a", "mine.cpp", b"int main(){}").files == {
        "bot.cpp": b"int main(){}"
    }
    assert set(source_from_upload("a", "x.rs", b"fn main(){}").files) == {"main.rs"}
    assert set(source_from_upload("a", "Anything.java", b"class Bot{}").files) == {"Bot.java"}
    assert set(source_from_upload("a", "b.js", b"").files) == {"bot.js"}


def test_the_build_output_name_is_reserved() -> None:
    with pytest.raises(BadBot, match="'bot' is the name of the build's output"):
        check_upload({"bot.cpp": b"", "bot": b"x"})
    with pytest.raises(BadBot, match=r"'bot\.jar' is the name"):
        check_upload({"Bot.java": b"", "bot.jar": b"x"})


def elf(*, machine: int = 62, interp: bool = False, elf_class: int = 2) -> bytes:
    """A minimal ELF header with one program header (PT_LOAD or PT_INTERP)."""
    header = bytearray(64)
    header[:4] = b"\x7fELF"
    header[4], header[5] = elf_class, 1
    struct.pack_into("<HH", header, 16, 2, machine)
    struct.pack_into("<Q", header, 32, 64)
    struct.pack_into("<HH", header, 54, 56, 1)
    program = bytearray(56)
    struct.pack_into("<I", program, 0, 3 if interp else 1)
    return bytes(header + program)


def test_only_static_x86_64_executables_are_taken() -> None:
    check_static_binary(elf())
    with pytest.raises(BadBot, match="dynamically linked"):
        check_static_binary(elf(interp=True))
    with pytest.raises(BadBot, match="x86-64"):
        check_static_binary(elf(machine=183))
    with pytest.raises(BadBot, match="64-bit"):
        check_static_binary(elf(elf_class=1))
    with pytest.raises(BadBot, match="no ELF header"):
        check_static_binary(b"#!/bin/sh\n")
    with pytest.raises(BadBot, match="cut short"):
        check_static_binary(elf()[:70])
    assert source_from_upload("b", "bot", elf()).files == {"bot": elf()}
    with pytest.raises(BadBot, match="dynamically linked"):
        source_from_upload("b", "bot", elf(interp=True))


def test_an_elf_header_over_shell_commands_is_refused() -> None:
    """The attack (a red-team pass over the ready boxes): an ELF header Linux will not load
    (no program headers), then shell commands. execve fails with ENOEXEC, and glibc's execvp
    (bwrap's, in a box made at start) then runs the file with /bin/sh, while a ready box's
    waiter (dash's `exec`) does not: one upload, two behaviours. Refused at upload now."""
    header = bytearray(elf()[:64])
    struct.pack_into("<HH", header, 54, 56, 0)  # no program headers
    polyglot = bytes(header) + b'\necho "ran as a shell script" >&2; exit 7\n'
    with pytest.raises(BadBot, match="no valid program headers"):
        source_from_upload("poly", "bot", polyglot)
    for phentsize, phnum in ((32, 1), (56, 74)):
        damaged = bytearray(elf())
        struct.pack_into("<HH", damaged, 54, phentsize, phnum)
        with pytest.raises(BadBot, match="no valid program headers"):
            check_static_binary(bytes(damaged))
    nothing_to_load = bytearray(elf())
    struct.pack_into("<I", nothing_to_load, 64, 4)  # PT_NOTE: valid, but loads nothing
    with pytest.raises(BadBot, match="nothing to load"):
        check_static_binary(bytes(nothing_to_load))
