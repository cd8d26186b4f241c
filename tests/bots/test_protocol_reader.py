"""The runner's reader of bot replies, fed what a hostile bot can send.

`parse_reply` must turn every line into either a message or a ProtocolError (a strike with a
reason); anything else escaping it would fail the match, and a bot that sends it only when it
is losing would never lose a rated game. The reason must be storable text (no NUL, no lone
surrogate): it ends up in the log and in PostgreSQL.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bots.protocol import MAX_LINE, ProtocolError, parse_reply, shown
from tests.tiers import examples

HOSTILE_LINES = [
    b"[" * 200_000,
    b"{" * 100_000,
    b'{"a":' * 100_000,
    b'{"type":"action","id":' + b"9" * 5_000 + b',"action":"end"}',
    b'{"type":"action","id":1,"action":' + b"1" * 5_000 + b"}",
    b"-" + b"1" * 10_000,
    b'{"type":"action","id":NaN,"action":"end"}',
    b'{"type":"action","id":Infinity,"action":"end"}',
    b'{"type":"action","id":1e999,"action":"end"}',
    b'{"type":"action","id":1,"id":2,"action":"end","action":3}',
    b'{"type":"action","id":1,"action":"\\ud800"}',
    b'{"type":"\\udfff","id":1,"action":"end"}',
    b'{"type":"action","id":1,"action":"\\u0000"}',
    b"\xff\xfe\x00\x00",
    b"\xed\xa0\x80",
    b"\x00" * 1000,
    b'"' + b"a" * (MAX_LINE - 2) + b'"',
    b"[" + b"1," * (MAX_LINE // 2 - 2) + b"1]",
    b"",
    b"   ",
]


def check(line: bytes, expect: str = "action") -> None:
    """The one property: a message (a dict) or a ProtocolError whose text is storable."""
    try:
        message = parse_reply(line, expect)
    except ProtocolError as exc:
        text = str(exc)
        assert text.isascii() and "\x00" not in text
        text.encode("utf-8")  # no lone surrogate
        return
    assert isinstance(message, dict)
    assert message["type"] == expect


@pytest.mark.parametrize("line", HOSTILE_LINES, ids=lambda b: repr(b[:24]))
def test_hostile_lines_are_protocol_errors_or_messages(line: bytes) -> None:
    check(line)
    check(line, "ready")


def test_deep_nesting_and_huge_numbers_are_protocol_errors() -> None:
    with pytest.raises(ProtocolError, match="nested too deeply"):
        parse_reply(b"[" * 200_000, "action")
    with pytest.raises(ProtocolError, match="not JSON"):
        parse_reply(b'{"type":"action","id":' + b"9" * 5_000 + b"}", "action")


@given(st.binary(max_size=2_000))
@settings(max_examples=examples(400), suppress_health_check=[HealthCheck.too_slow])
def test_arbitrary_bytes(line: bytes) -> None:
    check(line)


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**4000), max_value=10**4000)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(st.characters(codec=None, exclude_categories=()), max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@given(
    JSON,
    st.sampled_from(["type", "id", "action", "x"]),
    st.sampled_from(["action", "ready", "bogus", 1, None]),
)
@settings(max_examples=examples(400), suppress_health_check=[HealthCheck.too_slow])
def test_arbitrary_json_in_every_field(value: object, key: str, kind: object) -> None:
    message = {"type": kind, "id": 1, "action": "end", key: value}
    try:
        line = json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass")
    except ValueError:  # an integer json.dumps itself refuses to print
        return
    check(line)
    check(json.dumps(value).encode() if not isinstance(value, int) else b"0")


@given(st.integers(min_value=1, max_value=300_000), st.sampled_from([b"[", b"{", b'{"a":']))
@settings(max_examples=examples(30), deadline=None)
def test_nesting_of_any_depth(depth: int, opener: bytes) -> None:
    check(opener * depth)


@given(st.integers(min_value=4_000, max_value=20_000))
@settings(max_examples=examples(20), deadline=None)
def test_numbers_of_any_length(digits: int) -> None:
    check(b'{"type":"action","id":' + b"7" * digits + b',"action":"end"}')
    check(b'{"type":"action","id":1,"action":"end","x":' + b"7" * digits + b"}")


def test_shown_never_raises_and_stays_short() -> None:
    huge = int("9" * 4000) ** 2  # 8,000 digits: more than repr allows
    assert "digits" in shown(huge)
    assert shown("\x00\ud800" * 100).isascii()
    assert len(shown("x" * 10_000, 50)) == 50
