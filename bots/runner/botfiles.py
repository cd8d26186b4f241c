"""Turning what a user names (an example, a `.py`, a `.zip`, a folder) into a bot's files.

Zip archives are read, never extracted to disk as given: every member name is checked (no
absolute paths, no `..`, no links) and sizes are bounded before anything is decompressed, so a
zip bomb or a path-traversal archive is refused with a reason. No member is decompressed past
the size it declares, so a member that lies about its size cannot get round those bounds.
"""

from __future__ import annotations

import stat
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
MAX_FILE_BYTES = 1 << 20
"""Largest single `.py` upload (1 MiB)."""
MAX_ZIP_BYTES = 5 << 20
"""Largest `.zip` upload, compressed (5 MiB)."""
MAX_BINARY_BYTES = 16 << 20
"""Largest executable upload (16 MiB: a static Rust or C++ bot is a few MiB)."""
MAX_UNPACKED_BYTES = 20 << 20
"""Largest total size of a zip's contents (20 MiB)."""
MAX_MEMBERS = 500
MAX_RATIO = 100
"""A member that would expand more than 100 times is treated as a zip bomb."""
MAX_NAME_BYTES = 255
"""Longest file or folder name (Linux's NAME_MAX)."""
MAX_PATH_BYTES = 1024
"""Longest path inside a bot: far below PATH_MAX (4096) once staged under the sandbox's home."""
MAX_DEPTH = 16
"""Most folders a path may be nested in."""


class BadBot(ValueError):
    """A bot upload that cannot be used, with the reason for its author."""


@dataclass(frozen=True)
class BotSource:
    """A bot's name and files (relative path -> bytes). The entry file says its language
    (`bots.runner.languages`): `bot.py`, `bot.js`, `bot.cpp`, `Cargo.toml`/`main.rs`,
    `Bot.java` or an executable `bot`."""

    name: str
    files: dict[str, bytes]


def example_names() -> list[str]:
    return sorted(p.name for p in EXAMPLES.iterdir() if (p / "bot.py").is_file())


def load_bot(spec: str | Path) -> BotSource:
    """An example name, a single source file (`.py`, `.js`, `.cpp`, `.rs`, `.java`), an
    executable named `bot`, a `.zip` archive, or a folder with an entry file."""
    from bots.runner.languages import check_upload

    text = str(spec)
    if text in example_names():
        return BotSource(text, _read_folder(EXAMPLES / text))
    path = Path(spec)
    if not path.exists():
        names = ", ".join(example_names())
        raise BadBot(f"{text}: no such file, and not an example bot ({names})")
    if path.is_dir():
        files = _read_folder(path)
        check_tree(text, files)
        try:
            check_upload(files)
        except BadBot as exc:
            raise BadBot(f"{text}: {exc}") from None
        return BotSource(path.name, files)
    return source_from_upload(path.stem, path.name, path.read_bytes())


def upload_limit(filename: str) -> int:
    """The largest upload so named, in bytes: a site checks it before reading the upload."""
    if filename.endswith(".zip"):
        return MAX_ZIP_BYTES
    if _single_file_name(filename) is None:  # an executable
        return MAX_BINARY_BYTES
    return MAX_FILE_BYTES


def source_from_upload(name: str, filename: str, data: bytes) -> BotSource:
    """Check an upload and return its files; raises BadBot saying what is wrong. A `.zip`
    keeps its tree; a single source file becomes its language's entry file (`mine.cpp` is
    `bot.cpp`); any other single file is taken for an executable named `bot`."""
    from bots.runner.languages import accepted, check_upload

    if filename.endswith(".zip"):
        files = _read_zip(filename, data)
    elif (entry := _single_file_name(filename)) is not None:
        if len(data) > MAX_FILE_BYTES:
            raise BadBot(f"{filename} is {len(data)} bytes; the limit is {MAX_FILE_BYTES}")
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            raise BadBot(f"{filename} is not UTF-8 text") from None
        files = {entry: data}
    elif "." not in Path(filename).name or data[:4] == b"\x7fELF":
        if len(data) > MAX_BINARY_BYTES:
            raise BadBot(f"{filename} is {len(data)} bytes; the limit is {MAX_BINARY_BYTES}")
        files = {"bot": data}
    else:
        raise BadBot(
            f"{filename}: upload a .zip, a single source file or an executable. "
            f"Accepted: {accepted()}"
        )
    try:
        check_upload(files)
    except BadBot as exc:
        raise BadBot(f"{filename}: {exc}") from None
    return BotSource(name, files)


SINGLE_FILE_NAMES = {
    ".py": "bot.py",
    ".js": "bot.js",
    ".cpp": "bot.cpp",
    ".rs": "main.rs",
    ".java": "Bot.java",
}
"""A single-file upload of a language's source is staged as its entry file."""


def _single_file_name(filename: str) -> str | None:
    for ending, entry in SINGLE_FILE_NAMES.items():
        if filename.endswith(ending):
            return entry
    return None


def check_tree(where: str, files: dict[str, bytes]) -> None:
    """Raise BadBot, naming the entry, unless `files` can be written out as a folder: every
    path relative, made of real names (no `.`, `..`, empty or control-character parts, none
    longer than MAX_NAME_BYTES), at most MAX_PATH_BYTES long and MAX_DEPTH deep, and no path
    both a file and a folder (`a` beside `a/b`). Checked at upload, so a bot that passes is
    one the sandbox can stage: a staging failure there once leaked whole sandboxes."""
    for name in files:
        parts = name.split("/")
        encoded = name.encode("utf-8", "surrogateescape")
        if name.startswith("/") or "\\" in name or ":" in name or ".." in parts:
            raise BadBot(f"{where}: entry {name!r} points outside the archive")
        if any(part in ("", ".") for part in parts):
            raise BadBot(f"{where}: entry {name!r} has an empty or '.' part")
        if any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
            raise BadBot(f"{where}: entry {name!r} has a control character in its name")
        if len(encoded) > MAX_PATH_BYTES:
            raise BadBot(f"{where}: entry {name[:60]!r}... is longer than {MAX_PATH_BYTES} bytes")
        if any(len(part.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES for part in parts):
            raise BadBot(
                f"{where}: entry {name[:60]!r} has a name longer than {MAX_NAME_BYTES} bytes"
            )
        if len(parts) - 1 > MAX_DEPTH:
            raise BadBot(f"{where}: entry {name[:60]!r} is nested deeper than {MAX_DEPTH} folders")
    for name in files:
        parts = name.split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            if folder in files:
                raise BadBot(f"{where}: {folder!r} is both a file and the folder of {name!r}")


def _read_folder(folder: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            files[path.relative_to(folder).as_posix()] = path.read_bytes()
    return files


def _read_zip(filename: str, data: bytes) -> dict[str, bytes]:
    import io

    if len(data) > MAX_ZIP_BYTES:
        raise BadBot(f"{filename} is {len(data)} bytes; the limit is {MAX_ZIP_BYTES}")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise BadBot(f"{filename} is not a valid zip archive ({exc})") from None
    members = archive.infolist()
    if len(members) > MAX_MEMBERS:
        raise BadBot(f"{filename} has {len(members)} entries; the limit is {MAX_MEMBERS}")
    total = 0
    files: dict[str, bytes] = {}
    for info in members:
        name = info.filename
        path = PurePosixPath(name)
        if name.startswith("/") or "\\" in name or ".." in path.parts or ":" in name:
            raise BadBot(f"{filename}: entry {name!r} points outside the archive")
        if stat.S_ISLNK(info.external_attr >> 16):
            raise BadBot(f"{filename}: entry {name!r} is a symbolic link")
        if info.is_dir():
            continue
        total += info.file_size
        if total > MAX_UNPACKED_BYTES:
            raise BadBot(f"{filename} unpacks to more than {MAX_UNPACKED_BYTES} bytes")
        if info.file_size > MAX_RATIO * max(info.compress_size, 1) and info.file_size > 1 << 16:
            raise BadBot(f"{filename}: entry {name!r} expands {info.file_size} bytes: a zip bomb?")
        if name in files:
            raise BadBot(f"{filename}: entry {name!r} appears twice")
        files[name] = _read_member(filename, archive, info)
    check_tree(filename, files)
    return files


def _read_member(filename: str, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """A member's bytes, never more than its declared size (which the limits above counted)."""
    name = info.filename
    lies = f"{filename}: entry {name!r} does not match its declared size"
    try:
        with archive.open(info) as member:
            # One byte past the declared size is enough to catch a member that hides more;
            # its CRC, checked at the declared end, catches the rest of such lies.
            content = member.read(info.file_size + 1)
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise BadBot(f"{lies} or is damaged ({exc})") from None
    except (NotImplementedError, RuntimeError) as exc:
        # An unknown compression method, or an encrypted member (no password to give).
        raise BadBot(f"{filename}: entry {name!r} cannot be read ({exc})") from None
    if len(content) != info.file_size:
        raise BadBot(lies)
    return content
