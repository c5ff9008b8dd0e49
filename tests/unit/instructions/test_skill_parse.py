"""Reading the fields of a SKILL.md leniently: names, descriptions, the honoured extension keys."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_ls.instructions.skill_parse import (
    CHECKS_NOT_TEXT,
    ParsedSkill,
    parse_skill,
    skill_id,
    split_allowed_tools,
)

P = Path("/ws/.agents/skills/demo/SKILL.md")
NO_NAME = "no 'name' in the frontmatter; the skill is named after its directory,"


def parse(frontmatter: str, dir_name: str = "demo") -> tuple[ParsedSkill | None, list[tuple[int, str, str]]]:
    skill, diagnostics = parse_skill(P, f"---\n{frontmatter}---\nBody\n", complete=True, dir_name=dir_name)
    return skill, [(d.line, d.severity, d.message) for d in diagnostics]


def loaded(frontmatter: str, dir_name: str = "demo") -> ParsedSkill:
    skill, diagnostics = parse(frontmatter, dir_name)
    assert skill is not None, diagnostics
    return skill


@pytest.mark.parametrize(
    ("raw", "ident"),
    [
        ("code-review", "code-review"),
        ("Ahrefs Automation", "ahrefs-automation"),
        ("  Foo__Bar--baz  ", "foo-bar-baz"),
        ("café", "café"),
        ("ＦＵＬＬ", "full"),  # NFKC folds full-width letters
        ("../../etc/passwd", "etc-passwd"),
        ("$(rm -rf /)", "rm-rf"),
        ("-x-", "x"),
        ("a" * 70, "a" * 64),
        ("a" * 63 + "-b", "a" * 63),
        ("!!!", ""),
        ("", ""),
    ],
)
def test_skill_id(raw: str, ident: str) -> None:
    assert skill_id(raw) == ident


@pytest.mark.parametrize(
    ("text", "tools"),
    [
        ("Read Grep Glob", ["Read", "Grep", "Glob"]),
        ("Bash(git:*) Bash(jq:*) Read", ["Bash(git:*)", "Bash(jq:*)", "Read"]),
        ("Bash(uv run pytest *), Bash(git diff *)", ["Bash(uv run pytest *)", "Bash(git diff *)"]),
        ("Read,Grep", ["Read", "Grep"]),
        ("Bash(source .env && uv run pytest *)", ["Bash(source .env && uv run pytest *)"]),
        ("Bash(a (b) c) Read", ["Bash(a (b) c)", "Read"]),
        ("  ", []),
    ],
)
def test_split_allowed_tools(text: str, tools: list[str]) -> None:
    assert split_allowed_tools(text) == tools


DESCRIPTIONS = [
    # (id, frontmatter after "name: demo\n", expected description)
    ("plain", "description: Does a thing.\n", "Does a thing."),
    ("multi-line plain folds", "description: Does a\n  thing across\n  lines\n", "Does a thing across lines"),
    ("folded > loses the final newline", "description: >\n  One\n  two\n\n  three\n", "One two\nthree"),
    ("folded >-", "description: >-\n  One\n  two: x\n", "One two: x"),
    ("literal | keeps inner newlines", "description: |\n  One\n\n  two\n", "One\n\ntwo"),
    ("literal |-", "description: |-\n  One\n  two\n", "One\ntwo"),
    ("double quoted", 'description: "Say \\"hi\\": \'x\'"\n', "Say \"hi\": 'x'"),
    ("single quoted", "description: 'It''s: fine'\n", "It's: fine"),
    ("escaped CR becomes LF", 'description: "a\\r\\nb\\rc"\n', "a\nb\nc"),
    ("number taken as written", "description: 1.10\n", "1.10"),
    ("date taken as written", "description: 2026-03-17\n", "2026-03-17"),
]


@pytest.mark.parametrize(
    ("text", "description"), [c[1:] for c in DESCRIPTIONS], ids=[c[0] for c in DESCRIPTIONS]
)
def test_description_forms(text: str, description: str) -> None:
    skill = loaded("name: demo\n" + text)
    assert skill.description == description
    assert skill.description_line == 2


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("name: demo\n", 0, "no 'description' in the frontmatter; skill not loaded"),
        (
            "name: demo\ndescription:\n",
            2,
            "'description' is empty or not text in the frontmatter; skill not loaded",
        ),
        ("name: demo\ndescription: '  '\n", 2, "'description' is empty or not text in the frontmatter"),
        ("name: demo\ndescription: [a, b]\n", 2, "'description' is empty or not text in the frontmatter"),
        ("name: demo\ndescription: {a: b}\n", 2, "'description' is empty or not text in the frontmatter"),
    ],
)
def test_a_missing_or_empty_description_skips_the_skill(text: str, line: int, message: str) -> None:
    skill, diagnostics = parse(text)
    assert skill is None
    assert [(d_line, severity) for d_line, severity, _ in diagnostics] == [(line, "error")]
    assert diagnostics[0][2].startswith(message)


@pytest.mark.parametrize(
    ("text", "dir_name", "name", "raw_name", "diagnostics"),
    [
        ("name: demo\n", "demo", "demo", "demo", []),
        ("name: Ahrefs Automation\n", "ahrefs-automation", "ahrefs-automation", "Ahrefs Automation",
         [(1, "warning", "name 'Ahrefs Automation' is not a valid skill name; addressed as "
           "'ahrefs-automation'")]),
        ("", "pre-push-review", "pre-push-review", None,
         [(0, "warning", f"{NO_NAME} 'pre-push-review'")]),
        ("", "My Skill", "my-skill", None,
         [(0, "warning", f"{NO_NAME} 'My Skill' (as 'my-skill')")]),
        ("name:\n", "demo", "demo", None,
         [(1, "warning", "'name' is empty or not text; the skill is named after its directory, 'demo'")]),
        ("name: [a]\n", "demo", "demo", None,
         [(1, "warning", "'name' is empty or not text; the skill is named after its directory, 'demo'")]),
        ("name: '!!!'\n", "demo", "demo", None,
         [(1, "warning", "name '!!!' has no letters or digits; the skill is named after its directory, "
           "'demo'")]),
        ("name: 42\n", "demo", "42", "42", []),
        ("Name: Upper\nname: lower\n", "demo", "lower", "lower", []),
    ],
)  # fmt: skip
def test_names(text: str, dir_name: str, name: str, raw_name: str | None, diagnostics: list[Any]) -> None:
    skill, found = parse(text + "description: d\n", dir_name)
    assert skill is not None
    assert (skill.name, skill.raw_name, found) == (name, raw_name, diagnostics)


def test_no_usable_name_at_all_skips_the_skill() -> None:
    skill, diagnostics = parse("description: d\n", dir_name="!!!")
    assert skill is None
    assert diagnostics == [(0, "error", "no usable name (nor directory name '!!!'); skill not loaded")]


@pytest.mark.parametrize(
    ("text", "invocable", "warned"),
    [
        ("", True, False),
        ("disable-model-invocation: true\n", False, False),
        ("disable-model-invocation: false\n", True, False),
        ("disable-model-invocation: 'true'\n", False, False),
        ("disable-model-invocation: yes\n", False, False),
        ("disable-model-invocation:\n", True, False),
        ("disable-model-invocation: sometimes\n", False, True),  # fails closed
    ],
)
def test_disable_model_invocation(text: str, invocable: bool, warned: bool) -> None:
    skill, diagnostics = parse("name: demo\ndescription: d\n" + text)
    assert skill is not None and skill.model_invocable is invocable
    message = "'disable-model-invocation' must be true or false; read as true (only /demo runs it)"
    assert diagnostics == ([(3, "warning", message)] if warned else [])


@pytest.mark.parametrize(
    ("text", "tools"),
    [
        ("allowed-tools: Read Grep\n", ("Read", "Grep")),
        ("allowed-tools: Read, Bash(git diff *)\n", ("Read", "Bash(git diff *)")),
        ("allowed-tools:\n  - Read\n  - Bash(gh pr view:*)\n  -\n", ("Read", "Bash(gh pr view:*)")),
        ("allowed-tools: [Read, Grep]\n", ("Read", "Grep")),
        ("allowed-tools:\n", ()),
    ],
)
def test_allowed_tools_forms(text: str, tools: tuple[str, ...]) -> None:
    assert loaded("name: demo\ndescription: d\n" + text).allowed_tools == tools


def test_allowed_tools_as_a_mapping_is_ignored_with_a_warning() -> None:
    skill, diagnostics = parse("name: demo\ndescription: d\nallowed-tools: {a: b}\n")
    assert skill is not None and skill.allowed_tools == ()
    assert diagnostics == [(3, "warning", "'allowed-tools' must be a string or a list of tools; ignored")]


def test_argument_hint_and_metadata_are_kept_as_written() -> None:
    skill = loaded(
        "name: demo\ndescription: d\nargument-hint: [file, --fix]\n"
        "metadata:\n  version: 1.10\n  updated: 2026-03-17\n  flag: yes\n  none:\n  list: [a, b]\n"
        '  escaped: "a\\r\\nb"\n'
    )
    assert skill.argument_hint == "[file, --fix]"
    assert skill.metadata == {
        "version": "1.10",
        "updated": "2026-03-17",
        "flag": "yes",
        "none": "",
        "list": "[a, b]",
        "escaped": "a\nb",
    }


def test_metadata_that_is_not_a_mapping_is_ignored_with_a_warning() -> None:
    skill, diagnostics = parse("name: demo\ndescription: d\nmetadata: v1\n")
    assert skill is not None and skill.metadata == {}
    assert diagnostics == [(3, "warning", "'metadata' must be a mapping of keys to strings; ignored")]


def test_the_unquoted_colon_description_loads_with_a_warning() -> None:
    skill, diagnostics = parse("name: demo\ndescription: Use this skill when: the user asks for a review\n")
    assert skill is not None
    assert skill.description == "Use this skill when: the user asks for a review"
    assert len(diagnostics) == 1
    line, severity, message = diagnostics[0]
    assert (line, severity) == (2, "warning") and message.startswith("loaded leniently: ")


def test_a_duplicate_key_warns_and_the_last_one_wins() -> None:
    skill, diagnostics = parse("name: first\ndescription: d\nname: second\n")
    assert skill is not None and skill.name == "second"
    assert diagnostics == [
        (3, "warning", "duplicate key 'name' (also on line 2): the last one is used; others may differ")
    ]


@pytest.mark.parametrize(
    ("text", "complete", "message"),
    [
        ("# Persona index\n", True, "no frontmatter: SKILL.md must start with a '---' line"),
        ("---\nname: demo\n", True, "the frontmatter opened on line 1 is never closed by a '---' line"),
        (
            "---\nname: demo\n",
            False,
            "the frontmatter opened on line 1 is not closed within the first 64 KiB",
        ),
        ("---\n- a\n---\n", True, "the frontmatter is a list, not a mapping of keys"),
        ("---\ndescription: [x\n---\n", True, "invalid YAML frontmatter: "),
    ],
)
def test_files_that_are_not_skills(text: str, complete: bool, message: str) -> None:
    skill, diagnostics = parse_skill(P, text, complete=complete, dir_name="demo")
    assert skill is None
    assert [d.severity for d in diagnostics] == ["error"]
    assert diagnostics[0].message.startswith(message) and diagnostics[0].message.endswith("skill not loaded")


def test_crlf_and_bom_parse_like_the_plain_file() -> None:
    plain = "---\nname: demo\ndescription: |\n  One\n  two\nmetadata:\n  a: b\n---\nBody\n"
    variants = [plain, "\ufeff" + plain, plain.replace("\n", "\r\n"), "\ufeff" + plain.replace("\n", "\r\n")]
    results = [parse_skill(P, text, complete=True, dir_name="demo") for text in variants]
    first = results[0][0]
    assert first is not None
    for skill, diagnostics in results:
        assert skill is not None and diagnostics == []
        assert (skill.name, skill.description, skill.metadata) == ("demo", "One\ntwo", {"a": "b"})
        assert "\r" not in skill.description


def test_a_claude_code_argument_hint_loads_leniently_as_text() -> None:
    skill, diagnostics = parse("name: demo\ndescription: d\nargument-hint: [pr-number] [priority]\n")
    assert skill is not None and skill.argument_hint == "[pr-number] [priority]"
    assert [(line, severity) for line, severity, _ in diagnostics] == [(3, "warning")]


def test_metadata_checks_as_a_list_is_one_command_per_item_with_a_note() -> None:
    skill, diagnostics = parse(
        "name: demo\ndescription: d\nmetadata:\n  checks:\n    - grep -q 3 app.py\n    - ruff check .\n"
    )
    assert skill is not None and skill.metadata == {"checks": "grep -q 3 app.py\nruff check ."}
    assert [(line, severity) for line, severity, _ in diagnostics] == [(3, "information")]
    assert "metadata 'checks' is a list" in diagnostics[0][2]


def test_metadata_checks_that_is_neither_text_nor_a_list_of_commands_is_dropped_with_a_warning() -> None:
    skill, diagnostics = parse("name: demo\ndescription: d\nmetadata:\n  checks:\n    run: pytest\n")
    assert skill is not None and skill.metadata == {}
    assert diagnostics == [
        (
            3,
            "warning",
            CHECKS_NOT_TEXT,
        )
    ]
