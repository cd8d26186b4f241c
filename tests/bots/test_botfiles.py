"""Bot uploads: single files, folders, examples, and zip archives that are refused."""

from __future__ import annotations

import io
import stat
import zipfile
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
        ({"helper.py": b"x"}, None, "no bot.py"),
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
    with pytest.raises(BadBot, match=r"\.py file or a \.zip"):
        source_from_upload("b", "b.exe", b"MZ")
    with pytest.raises(BadBot, match="not an example bot"):
        load_bot(tmp_path / "missing.py")
