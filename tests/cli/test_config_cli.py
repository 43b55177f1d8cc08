"""The project configuration (``cdc-contracts.yaml``), exceptions, ``init`` and the CI report
formats, through the real CLI entry point on real git repositories.

SARIF output is validated against the published SARIF 2.1.0 JSON schema, vendored under
``tests/fixtures/sarif/`` (see PROVENANCE.md there).
"""

from __future__ import annotations

import json
import os
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from clirun import Run, run
from diff.test_check_registry import registry_url  # noqa: F401  (a fixture: a real registry)
from diff.test_cli import contracts_repo, git

from cli.diff_cmd import OutputFormat
from contracts.config import CONFIG_NAME, find_config, load_config, starter_config
from contracts.diff.report import RENDERERS

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "diff"
SARIF_SCHEMA = ROOT / "tests" / "fixtures" / "sarif" / "sarif-schema-2.1.0.json"
NAME = "pgserver1.public.orders"  # the name of the decimal-scale-changed fixture's contract
REASON = "amounts carry tenths of a cent from release 42 on; consumers updated (PR 1234)"

EXCEPTION = f"""\
exceptions:
  - contract: {NAME}
    rule: decimal-scale-changed
    path: amount
    reason: "{REASON}"
    until: {{until}}
"""


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A repository (the cwd) whose committed contracts/orders.yaml now changes a decimal's
    scale in the working tree: a breaking change."""
    root = tmp_path / "repo"
    root.mkdir()
    contracts_repo(root, {"orders.yaml": "decimal-scale-changed"})
    git(root, "add", "contracts")
    git(root, "commit", "-q", "-m", "contracts")
    shutil.copy(FIX / "decimal-scale-changed" / "after.yaml", root / "contracts" / "orders.yaml")
    monkeypatch.chdir(root)
    monkeypatch.delenv("CDC_CONTRACTS_CONFIG", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    yield root


def configure(root: Path, text: str) -> Path:
    path = root / CONFIG_NAME
    path.write_text(text, encoding="utf-8")
    return path


def line_of(path: Path, needle: str) -> int:
    return next(i for i, t in enumerate(path.read_text().splitlines(), 1) if needle in t)


def check(*args: str) -> Run:
    return run("check", "contracts", "--against", "git:HEAD", *args)


def sarif_validator() -> Any:
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def valid_sarif(text: str) -> dict[str, Any]:
    log: dict[str, Any] = json.loads(text)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in sarif_validator().iter_errors(log)]
    assert not errors, errors
    return log


# --- the deliberate change -----------------------------------------------------------------------


def test_the_change_breaks_without_an_exception(repo: Path) -> None:
    result = check()
    assert result.code == 1
    assert "decimal-scale-changed" in result.text and "result: FAIL" in result.text


@pytest.mark.parametrize("fmt", sorted(RENDERERS))
def test_an_excepted_change_passes_with_the_exception_shown(repo: Path, fmt: str) -> None:
    config = configure(repo, EXCEPTION.format(until="2999-12-31"))
    where = f"{CONFIG_NAME}:{line_of(config, 'contract:')}"
    result = check("--output-format", fmt)
    assert result.code == 0, (result.text, result.err)
    out = result.text
    assert REASON in out  # the reason is shown in every format
    if fmt == "text":
        assert "✓ excepted decimal-scale-changed" in out
        assert f"excepted until 2999-12-31: {REASON} ({where})" in out
        assert "result: ok" in out
    elif fmt == "json":
        entry = json.loads(out)["contracts"][0]
        assert entry["findings"] == [] and entry["failed"] is False
        (waived,) = entry["waived"]
        assert waived["rule"] == "decimal-scale-changed" and waived["reason"] == REASON
        assert waived["until"] == "2999-12-31" and waived["where"] == where
        assert waived["expired"] is False
    elif fmt == "github":
        (notice,) = [ln for ln in out.splitlines() if ln.startswith("::notice file=")]
        line = line_of(repo / "contracts" / "orders.yaml", "field: amount")
        assert notice.startswith(f"::notice file=contracts/orders.yaml,line={line},")
        assert "excepted" in notice and not any(ln.startswith("::error") for ln in out.splitlines())
    elif fmt == "junit":
        root = ET.fromstring(out)
        assert root.get("failures") == "0"
        case = next(c for c in root.iter("testcase") if c.get("name") == "decimal-scale-changed")
        assert case.find("failure") is None
        assert REASON in (case.findtext("system-out") or "")
    elif fmt == "markdown":
        assert "✅ passed" in out
        assert "| breaking (excepted) | `decimal-scale-changed` |" in out
    elif fmt == "sarif":
        log = valid_sarif(out)
        (res,) = [r for r in log["runs"][0]["results"] if r["ruleId"] == "decimal-scale-changed"]
        assert res["level"] == "note"
        (suppression,) = res["suppressions"]
        assert suppression["kind"] == "external" and suppression["status"] == "accepted"
        assert suppression["justification"] == REASON
        region = suppression["location"]["physicalLocation"]["region"]
        assert region["startLine"] == line_of(config, "contract:")
    elif fmt == "gitlab":
        (issue,) = [i for i in json.loads(out) if i["check_name"] == "decimal-scale-changed"]
        assert issue["severity"] == "info"
        assert issue["location"]["path"] == "contracts/orders.yaml"


def test_an_expired_exception_fails_saying_when_it_expired(repo: Path) -> None:
    configure(repo, EXCEPTION.format(until="2020-01-01"))
    result = check()
    assert result.code == 1
    assert f"exception expired on 2020-01-01: {REASON}" in result.text
    assert "result: FAIL" in result.text
    data = json.loads(check("--output-format", "json").text)["contracts"][0]
    assert data["failed"] is True and data["findings"][0]["rule"] == "decimal-scale-changed"
    assert data["expired"][0]["expired"] is True and data["waived"] == []
    log = valid_sarif(check("--output-format", "sarif").text)
    (res,) = [r for r in log["runs"][0]["results"] if r["ruleId"] == "decimal-scale-changed"]
    assert res["level"] == "error" and "suppressions" not in res
    assert "expired on 2020-01-01" in res["message"]["text"]


def test_an_exception_for_another_column_does_not_cover_the_change(repo: Path) -> None:
    configure(repo, EXCEPTION.format(until="2999-12-31").replace("path: amount", "path: id"))
    result = check()
    assert result.code == 1
    assert "matches no finding" in result.text


def test_an_exception_that_matches_nothing_is_a_warning(repo: Path) -> None:
    shutil.copy(FIX / "decimal-scale-changed" / "before.yaml", repo / "contracts" / "orders.yaml")
    config = configure(repo, EXCEPTION.format(until="2999-12-31"))
    line = line_of(config, "contract:")
    result = check()
    assert result.code == 0
    warning = (
        f"warning: {CONFIG_NAME}:{line}: exception {NAME} decimal-scale-changed amount matches no "
        "finding: remove it, or correct its contract, rule or path"
    )
    assert warning in result.lines()
    github = check("--output-format", "github").text
    assert f"::warning file={CONFIG_NAME},line={line},title=cdc-contracts configuration::" in github
    assert json.loads(check("--output-format", "json").text)["warnings"][0]["line"] == line
    log = valid_sarif(check("--output-format", "sarif").text)
    (note,) = log["runs"][0]["invocations"][0]["toolConfigurationNotifications"]
    assert note["level"] == "warning" and "matches no finding" in note["message"]["text"]
    issues = json.loads(check("--output-format", "gitlab").text)
    assert [i["location"] for i in issues] == [{"path": CONFIG_NAME, "lines": {"begin": line}}]
    junit = ET.fromstring(check("--output-format", "junit").text)
    assert any(s.get("name") == "configuration" for s in junit.iter("testsuite"))
    assert "matches no finding" in check("--output-format", "markdown").text


def test_diff_applies_the_exceptions_of_the_new_contract(repo: Path) -> None:
    configure(repo, EXCEPTION.format(until="2999-12-31"))
    pair = [str(FIX / "decimal-scale-changed" / s) for s in ("before.yaml", "after.yaml")]
    result = run("diff", *pair)
    assert result.code == 0 and REASON in result.text
    # an exception about another contract is not diff's business: no warning
    other = run("diff", *[str(FIX / "format-changed" / s) for s in ("before.yaml", "after.yaml")])
    assert "warning:" not in other.text


# --- the file itself -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "needle", "message"),
    [
        ("fail_on: breaking\ncolour: red\n", "colour", "colour: unknown key 'colour'"),
        (
            EXCEPTION.format(until="2999-12-31") + "    ticket: 12\n",
            "ticket",
            "exceptions.0.ticket: unknown key 'ticket'",
        ),
        (
            EXCEPTION.format(until="2999-12-31").replace("decimal-scale-changed", "decimal-scale"),
            "rule:",
            "exceptions.0.rule: unknown rule 'decimal-scale' (did you mean "
            "'decimal-scale-changed'?)",
        ),
        (
            f"exceptions:\n  - contract: {NAME}\n    rule: column-removed\n",
            "- contract",
            "exceptions.0.reason: missing required key 'reason'",
        ),
        (
            EXCEPTION.format(until="2026-02-30"),
            "until:",
            "'2026-02-30' is not a date: day is out of range for month",
        ),
        ("fail_on: sometimes\n", "fail_on", "fail_on: Input should be 'breaking', 'warning'"),
        (
            "registry:\n  url: http://registry:8081\n  basic_auth: ci:s3cret\n",
            "basic_auth",
            "registry.basic_auth: a secret may not be written in the configuration file",
        ),
        (
            "registry:\n  url: https://ci:s3cret@registry.example.com\n",
            "url:",
            "registry.url: the URL holds a password",
        ),
        (
            "registry:\n  bearer_token_env: eyJhbGciOi.J9.x\n",
            "bearer_token_env",
            "is not the name of an environment variable",
        ),
        (
            f"exceptions:\n  - contract: {NAME}\n    rule: avro-type-mismatch\n    reason: r\n",
            "rule:",
            "an exception cannot make the registry accept it",
        ),
    ],
)
def test_a_bad_configuration_is_one_line_with_file_and_line(
    repo: Path, text: str, needle: str, message: str
) -> None:
    config = configure(repo, text)
    result = check()
    assert result.code == 2
    (line,) = result.err.splitlines()
    assert line.startswith(f"error: {CONFIG_NAME}:{line_of(config, needle)}: "), line
    assert message in line
    assert "s3cret" not in line  # a secret is never echoed


def test_the_file_is_found_upward_but_not_past_the_repository(repo: Path) -> None:
    (repo.parent / CONFIG_NAME).write_text("colour: red\n")  # outside the repository: unseen
    assert find_config(repo / "contracts") is None
    assert check().code == 1
    config = configure(repo, EXCEPTION.format(until="2999-12-31"))
    assert find_config(repo / "contracts") == config.resolve()
    os.chdir(repo / "contracts")
    assert run("check", ".", "--against", "git:HEAD").code == 0  # found from a subdirectory


def test_config_names_a_file_and_flags_override_it(repo: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "ci.yaml"
    elsewhere.write_text(EXCEPTION.format(until="2999-12-31") + "output_format: json\n")
    configure(repo, "fail_on: never\n")  # the discovered file is not read with --config
    result = check("--config", str(elsewhere))
    assert result.code == 0 and json.loads(result.text)["failed"] is False
    # the flag beats the file's output_format
    assert check("--config", str(elsewhere), "--output-format", "text").text.startswith(NAME)
    # the file's fail_on applies; --fail-on beats it
    assert check().code == 0
    assert check("--fail-on", "breaking").code == 1
    missing = check("--config", str(tmp_path / "nope.yaml"))
    assert missing.code == 2 and "no such configuration file" in missing.err


def test_the_configuration_sets_the_contracts_directory_and_default_level(repo: Path) -> None:
    orders = repo / "contracts" / "orders.yaml"
    orders.write_text(orders.read_text().replace("compatibility: BACKWARD\n", ""))
    configure(repo, "contracts: contracts\ncompatibility: FULL\noutput_format: json\n")
    data = json.loads(run("check", "--against", "git:HEAD").text)  # DIR from the file
    assert data["contracts"][0]["level"] == "FULL"
    orders.write_text(orders.read_text().replace("key: [id]\n", "key: [id]\ncompatibility: NONE\n"))
    data = json.loads(run("check", "--against", "git:HEAD").text)
    # a contract's own level wins over the default: NONE, a lowering from the committed
    # BACKWARD, so the change is judged at BACKWARD (REVIEW-1 F1)
    assert data["contracts"][0]["level"] == "BACKWARD"
    found = data["contracts"][0]["findings"]
    (lowered,) = [f for f in found if f["rule"] == "compatibility-level-lowered"]
    assert "from BACKWARD to NONE" in lowered["message"], found


def test_the_configuration_file_is_not_taken_for_a_contract(repo: Path) -> None:
    configure(repo, EXCEPTION.format(until="2999-12-31"))
    git(repo, "add", CONFIG_NAME)
    git(repo, "commit", "-q", "-m", "config")
    result = run("check", ".", "--against", "git:HEAD", "--output-format", "json")
    assert result.code == 0, result.err
    assert [c["file"] for c in json.loads(result.text)["contracts"]] == ["contracts/orders.yaml"]


# --- the report formats --------------------------------------------------------------------------


def test_output_formats_are_the_renderers() -> None:
    assert [f.value for f in OutputFormat] == list(RENDERERS)


def test_sarif_locates_the_breaking_column(repo: Path) -> None:
    log = valid_sarif(check("--output-format", "sarif").text)
    run_ = log["runs"][0]
    rules = run_["tool"]["driver"]["rules"]
    (res,) = run_["results"]
    assert rules[res["ruleIndex"]]["id"] == res["ruleId"] == "decimal-scale-changed"
    assert rules[res["ruleIndex"]]["help"]["text"]
    assert res["level"] == "error"
    physical = res["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == "contracts/orders.yaml"
    assert physical["region"]["startLine"] == line_of(
        repo / "contracts" / "orders.yaml", "field: amount"
    )
    assert run_["invocations"][0] == {"executionSuccessful": True, "exitCode": 1}


def test_gitlab_fingerprints_are_stable_when_lines_move(repo: Path) -> None:
    first = json.loads(check("--output-format", "gitlab").text)
    orders = repo / "contracts" / "orders.yaml"
    orders.write_text("# moved down a line\n" + orders.read_text())
    second = json.loads(check("--output-format", "gitlab").text)
    assert [i["fingerprint"] for i in first] == [i["fingerprint"] for i in second]
    assert second[0]["location"]["lines"]["begin"] == first[0]["location"]["lines"]["begin"] + 1
    for issue in second:
        assert set(issue) == {"description", "check_name", "fingerprint", "severity", "location"}
        assert issue["severity"] in {"info", "minor", "major", "critical", "blocker"}


def test_output_file_gets_the_report_and_stdout_the_summary(repo: Path) -> None:
    result = check("--output-format", "sarif", "-o", "out/contracts.sarif")
    assert result.code == 1
    valid_sarif((repo / "out" / "contracts.sarif").read_text())
    assert "result: FAIL" in result.text and "wrote out/contracts.sarif" in result.err


@pytest.mark.parametrize("fmt", ["github", "junit", "sarif", "gitlab", "json"])
def test_a_run_that_cannot_judge_is_one_error_in_the_format(repo: Path, fmt: str) -> None:
    result = run("check", "contracts", "--against", "git:no-such-ref", "--output-format", fmt)
    assert result.code == 2
    assert result.err.startswith("error: --against git:no-such-ref: git ref 'no-such-ref'")
    out = result.text
    if fmt == "github":
        (line,) = out.splitlines()
        assert line.startswith("::error title=cdc-contracts could not run::")
    elif fmt == "junit":
        root = ET.fromstring(out)
        assert root.get("errors") == "1" and len(list(root.iter("error"))) == 1
    elif fmt == "sarif":
        invocation = valid_sarif(out)["runs"][0]["invocations"][0]
        assert invocation["executionSuccessful"] is False
        assert len(invocation["toolExecutionNotifications"]) == 1
    elif fmt == "gitlab":
        (issue,) = json.loads(out)
        assert issue["severity"] == "blocker" and issue["check_name"] == "unusable-input"
    else:
        assert json.loads(out)["failed"] is True


def test_a_contract_that_does_not_load_is_located_in_sarif(repo: Path) -> None:
    orders = repo / "contracts" / "orders.yaml"
    orders.write_text(orders.read_text().replace("columns:", "colums:", 1))
    result = check("--output-format", "sarif")
    assert result.code == 2
    (note,) = valid_sarif(result.text)["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    location = note["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "contracts/orders.yaml"
    assert location["region"]["startLine"] >= 1


# --- init ----------------------------------------------------------------------------------------


def test_init_writes_a_starter_and_refuses_to_overwrite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    git(tmp_path, "init", "-q")
    result = run("init")
    assert result.code == 0, result.err
    config = tmp_path / CONFIG_NAME
    assert config.read_text() == starter_config()
    assert load_config(config).contracts == "contracts" and (tmp_path / "contracts").is_dir()
    again = run("init")
    assert again.code == 2 and "already exists: give --force" in again.err
    config.write_text("fail_on: never\n")
    assert run("init", "--force").code == 0 and config.read_text() == starter_config()


def test_init_from_registry_pulls_the_registered_contracts(
    registry_url: str,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from registry_sync.client import RegistryClient, RegistryConfig
    from registry_sync.desired import desired_subjects, load_contracts
    from registry_sync.sync import push

    with RegistryClient(RegistryConfig(url=registry_url)) as client:
        push(
            client, desired_subjects(load_contracts(FIX / "decimal-scale-changed" / "before.yaml"))
        )
    project = tmp_path / "project"
    result = run("init", str(project), "--from-registry", registry_url)
    assert result.code == 0, result.err
    pulled = project / "contracts" / f"{NAME}.yaml"
    assert pulled.is_file()
    config = load_config(project / CONFIG_NAME)
    assert config.registry.url == registry_url
    # the pulled contract is what was registered: no change against the registry
    monkeypatch.chdir(project)
    check_result = run("check", "--against", "registry")
    assert check_result.code == 0, check_result.text + check_result.err
    assert "0 changed or added/removed, 1 unchanged" in check_result.text
    # a second pull into a directory holding contracts needs --force
    again = run("init", str(project), "--from-registry", registry_url, "--force")
    assert again.code == 0
    refused = run(
        "init",
        str(project / "other"),
        "--contracts",
        "../contracts",
        "--from-registry",
        registry_url,
    )
    assert refused.code == 2 and "already holds contract files" in refused.err


def test_a_bad_configuration_is_one_error_in_the_format_asked_for(repo: Path) -> None:
    config = configure(repo, "colour: red\n")
    result = check("--output-format", "sarif")
    assert result.code == 2
    (note,) = valid_sarif(result.text)["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    location = note["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == CONFIG_NAME
    assert location["region"]["startLine"] == line_of(config, "colour")


def test_registry_settings_come_from_the_file_and_a_named_variable_must_be_set(
    registry_url: str,  # noqa: F811
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = configure(
        repo,
        f"against: registry\nregistry:\n  url: {registry_url}\n"
        "  basic_auth_env: CDC_TEST_REGISTRY_AUTH\n",
    )
    monkeypatch.delenv("CDC_TEST_REGISTRY_AUTH", raising=False)
    monkeypatch.delenv("SCHEMA_REGISTRY_URL", raising=False)
    monkeypatch.delenv("CDC_CONTRACTS_REGISTRY_URL", raising=False)
    unset = run("check", "contracts")
    assert unset.code == 2
    line = line_of(config, "basic_auth_env")
    assert unset.err.startswith(f"error: {CONFIG_NAME}:{line}: registry.basic_auth_env names ")
    assert "CDC_TEST_REGISTRY_AUTH, which is not set" in unset.err
    monkeypatch.setenv("CDC_TEST_REGISTRY_AUTH", "ci:secret")
    check_registry = run("check", "contracts", "--output-format", "json")
    assert check_registry.code == 0, check_registry.err  # nothing registered: the contract is new
    data = json.loads(check_registry.text)
    assert data["against"] == "registry" and data["contracts"][0]["status"] == "added"
