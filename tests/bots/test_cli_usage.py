"""The `grass` command line's own errors: a mistake in a command's arguments shows that
command's usage (argparse printed the top level's list of commands, which does not say what
`login` takes)."""

from __future__ import annotations

import pytest

from bots import cli


def test_an_unknown_argument_shows_the_commands_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["login", "--site", "http://127.0.0.1:9", "--tokn", "abc"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: grass login ")
    assert "--token [TOKEN]" in err
    assert "unrecognized arguments: --tokn abc" in err


def test_the_token_may_be_given_or_asked_for() -> None:
    parse = cli.parser().parse_args
    assert parse(["login", "--token", "abc123"]).token == "abc123"
    assert parse(["login", "--token"]).token == cli.ASK
    assert parse(["login"]).token is None
