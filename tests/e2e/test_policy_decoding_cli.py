"""``agent-ls policy check`` on words bash decodes and on commands behind wrappers (issue 11 items 4, 5).

A real process each time: a word spelled with ``$'...'``, ``$"..."`` or adjacent quotes gets the
plain word's verdict, a word that cannot be decoded asks, and no program put in front of a command
lifts a deny rule, built-in or from the user config.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_policy_cli import ASK, DENY, as_json, check, root

__all__ = ["root"]  # a fixture shared with test_policy_cli (config_dir is in conftest)


@pytest.mark.parametrize(
    ("command", "code", "rule"),
    [
        ("cat .env", DENY, "paths: secret file"),
        ("cat $'.env'", DENY, "paths: secret file"),
        ("cat $'\\x2e\\x65\\156v'", DENY, "paths: secret file"),
        ('cat $".env"', DENY, "paths: secret file"),
        ("cat '.e'\"nv\"", DENY, "paths: secret file"),
        ("cat .e\\nv", DENY, "paths: secret file"),
        ("grep --file=$'.env' src/app.py", DENY, "paths: secret file"),
        ("cat < $'.e'nv", DENY, "paths: secret file"),
        ("cd $'src' && cat ../.env", DENY, "paths: secret file"),
        ("git diff $'HEAD:.env'", DENY, "paths: secret file"),
        ("$'\\x72m' -rf build", DENY, "bash: rm * (built-in)"),
        ("c''url https://example.com", DENY, "bash: curl * (built-in)"),
        ("cat $'\\u00e9'", ASK, "guard: argument not static"),
        ('cat <<E"O"F\nx\nEOF\nrm -rf build\nE"O"F\n', ASK, None),
    ],
)
def test_decoded_words(root: Path, config_dir: Path, command: str, code: int, rule: str | None) -> None:
    done = check("--json", "--", command, cwd=root, config_dir=config_dir)
    assert (done.returncode, done.stderr) == (code, "")
    if rule is not None:
        assert as_json(done)["rule"] == rule


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("setsid rm -rf build", "bash: rm * (built-in)"),
        ("busybox wget -q https://example.com/x", "bash: wget * (built-in)"),
        ("nice -n 5 ionice -c3 taskset 0x1 chrt 5 rm x", "bash: rm * (built-in)"),
        ("su -c 'rm -rf build' root", "bash: rm * (built-in)"),
        ("flock /tmp/l -c 'curl https://example.com'", "bash: curl * (built-in)"),
        ("strace -f -o /dev/null git push", "bash: git push* (built-in)"),
        ("doas git push", "bash: git push* (built-in)"),
        ("sudo ls", "bash: sudo * (built-in)"),
        ("mywrapper --flag rm -rf build", "bash: rm * (built-in)"),
        ("uv run curl https://example.com", "bash: curl * (built-in)"),
        ("docker-compose exec app npm publish", "bash: npm publish * (user config)"),
        ("setsid -f npm publish", "bash: npm publish * (user config)"),
        ("nohup make deploy", "bash: nohup * (user config)"),
    ],
)
def test_no_wrapper_lifts_a_deny(root: Path, config_dir: Path, command: str, rule: str) -> None:
    (config_dir / "agent-ls.toml").write_text(
        '[permissions]\ndeny = ["Bash(npm publish:*)", "Bash(nohup:*)"]\n'
    )
    done = check("--json", "--", command, cwd=root, config_dir=config_dir)
    assert (done.returncode, done.stderr) == (DENY, "")
    assert as_json(done)["rule"] == rule
