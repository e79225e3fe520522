"""A plan is a lookup: the prompt manifest records what each chapter sends at a profile (``runplan.manifest``), so
`recjudge run --judge SPEC --plan` prices any judge without executing a chapter whose sources are unchanged, says
which chapters it executed and why, and, without the data mirror, prices from the manifest and names the datasets
absent (a small project: one chapter asking the engine in its dry-run mode for every reader's judge and a local
judge of its own, its data faked by the environment)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from runplan_project import write_notebook

from recjudge.cli import main
from recjudge.compendium.runplan import manifest

DATASET = "llm-explanation-eval-lu2023"
# With its data the chapter asks 40 prompts, without them 4 (what it can do with none); FORBID_EXECUTION makes an
# execution fail, so a plan that prices it must have read the manifest.
CHAPTER = """
import os
from recjudge.llm import JudgeConfig, JudgeRequest, run_judge
from recjudge.llm.judge_spec import JudgeSpec
if os.environ.get("FORBID_EXECUTION"):
    raise RuntimeError("executed although the prompt manifest prices it")
n = 40 if os.environ.get("FAKE_DATA_PRESENT") else 4
requests = [JudgeRequest(f"k{i}", [{"role": "user", "content": f"item {i}: " + "x" * 39992}]) for i in range(n)]
for spec in judges:
    run_judge(JudgeSpec.from_parameter(spec).to_config(prompt="kang_basic", max_tokens=8), requests,
              progress=False)
run_judge(JudgeConfig(provider="local", model="smollm2-135m-instruct-q4_1", prompt="kang_basic", max_tokens=8),
          requests, progress=False)
"""
PLAN = f"""runs:
  - {{name: judged, notebook: notebooks/judged.ipynb, asks_llm: true, datasets: [{DATASET}]}}
  - {{name: plain, notebook: notebooks/plain.ipynb}}
profiles:
  paper:
    judged: {{size: 2}}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    (root / "src" / "recjudge").mkdir(parents=True)
    (root / "src" / "recjudge" / "module.py").write_text("ANSWER = 1\n")
    (root / "data" / "llm").mkdir(parents=True)
    write_notebook(root / "notebooks" / "judged.ipynb", CHAPTER, "size = 1\njudges = []")
    write_notebook(root / "notebooks" / "plain.ipynb", "print(rows)", "rows = 1")
    (root / "runplan.yaml").write_text(PLAN)
    monkeypatch.setenv("RECJUDGE_HOME", str(root))
    monkeypatch.setenv("RECJUDGE_STORE", str(root / "data" / "llm"))
    monkeypatch.delenv("RECJUDGE_RESULTS", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(root)
    return root


def with_data(monkeypatch: pytest.MonkeyPatch, present: bool) -> None:
    """The chapter's data present (the mirror set) or not, for the kernel and for the data layer's report."""
    if present:
        monkeypatch.setenv("FAKE_DATA_PRESENT", "1")
    else:
        monkeypatch.delenv("FAKE_DATA_PRESENT", raising=False)
    monkeypatch.setattr(manifest, "dataset_statuses",
                        lambda names: {name: "complete" if present else "missing" for name in sorted(names)})


def plan(capsys: pytest.CaptureFixture, *argv: str) -> tuple[dict[str, list[str]], str]:
    assert main(["run", "--plan", *argv]) == 0
    captured = capsys.readouterr()
    rows = {line.split()[0]: line.split()[1:] for line in captured.out.splitlines()
            if line.split()[:1] in (["judged"], ["total"])}
    return rows, captured.out + captured.err


def test_a_recorded_chapter_is_priced_from_the_manifest_for_any_judge_without_executing_it(
        project: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    with_data(monkeypatch, True)
    executed, said = plan(capsys, "--judge", "openai:gpt-4o-mini", "--profile", "paper")
    assert "judged: not in the prompt manifest" in said and "recorded 1 chapter(s)" in said
    recorded = (project / "prompt_manifest" / "paper.json").read_bytes()
    # 40 judgments of the reader's judge asked, 40 of the chapter's own judge left out (at this scale)
    assert executed["judged"][:4] == ["1", "80", "40", "40"]

    monkeypatch.setenv("FORBID_EXECUTION", "1")
    looked_up, said = plan(capsys, "--judge", "openai:gpt-4o-mini", "--profile", "paper")
    assert looked_up == executed
    assert "1 chapter(s) read from the prompt manifest prompt_manifest/paper.json" in said and "executed" not in said
    assert (project / "prompt_manifest" / "paper.json").read_bytes() == recorded

    # Another judge: priced from the same entry as an execution with that judge prices it
    other = ("--judge", "anthropic:claude-3-5-haiku", "--profile", "paper")
    from_manifest, _ = plan(capsys, *other)
    monkeypatch.delenv("FORBID_EXECUTION")
    by_execution, said = plan(capsys, *other, "--force")
    assert "judged: forced" in said
    assert from_manifest == by_execution and from_manifest["judged"][6] != executed["judged"][6]  # its own price
    assert (project / "prompt_manifest" / "paper.json").read_bytes() == recorded  # no reader's role it can record


def test_a_plan_without_the_data_prices_from_the_manifest_and_names_each_absent_dataset(
        project: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    with_data(monkeypatch, True)
    with_mirror, _ = plan(capsys, "--judge", "openai:gpt-4o-mini", "--profile", "paper")
    with_data(monkeypatch, False)
    for only in ((), ("--only", "judged")):
        without, said = plan(capsys, "--judge", "openai:gpt-4o-mini", "--profile", "paper", *only)
        assert without == with_mirror, "priced as the chapter runs with its data"
        assert (f"Data absent here: {DATASET} (missing here; judged). These chapters are priced from the prompt "
                "manifest as they run with those data") in said
        assert "Not priced in full" not in said


def test_a_chapter_that_must_be_executed_without_its_data_says_the_total_leaves_it_out(
        project: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    with_data(monkeypatch, False)
    rows, said = plan(capsys, "--judge", "openai:gpt-4o-mini", "--profile", "paper")
    assert rows["total"][:4] == ["1", "8", "4", "4"]
    assert (f"Not priced in full: judged (without {DATASET}, missing). Their rows, and so the total, leave out what "
            "these chapters would ask with those data") in said
    entry = json.loads((project / "prompt_manifest" / "paper.json").read_text())["chapters"]["judged"]
    assert entry["datasets"] == {DATASET: "missing"}
    # With the data, the entry recorded without them is not used: the chapter is executed and recorded anew. (Real
    # data change the plan pass's own skip records too; the data faked here do not, so those records go.)
    with_data(monkeypatch, True)
    for records in (project / "variants").glob("*/plan/.runplan-cache"):
        shutil.rmtree(records)
    rows, said = plan(capsys, "--judge", "openai:gpt-4o-mini", "--profile", "paper")
    assert "recorded with less of its data than this machine has" in said and rows["total"][:4] == ["1", "80", "40",
                                                                                                   "40"]
    # ... and a pass without them never replaces it, whatever the sources it stands for
    recorded = (project / "prompt_manifest" / "paper.json").read_bytes()
    assert not manifest.record_entries(project, "paper", {"judged": {**entry, "key": "newer sources"}}, ["judged"])
    assert (project / "prompt_manifest" / "paper.json").read_bytes() == recorded


def test_a_chapter_whose_sources_changed_is_executed_and_the_plan_says_so(
        project: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    with_data(monkeypatch, True)
    plan(capsys, "--judge", "openai:gpt-4o-mini", "--profile", "paper")
    (project / "src" / "recjudge" / "module.py").write_text("ANSWER = 2\n")
    _, said = plan(capsys, "--judge", "openai:gpt-4o-mini", "--profile", "paper")
    assert "1 executed (judged: changed since the prompt manifest)" in said
    _, said = plan(capsys, "--judge", "openai:gpt-4o-mini", "--profile", "paper")
    assert "read from the prompt manifest" in said


def test_a_judge_with_stored_replies_is_priced_by_execution(
        project: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    with_data(monkeypatch, True)
    plan(capsys, "--judge", "openai:gpt-4o-mini", "--profile", "paper")
    shard = project / "data" / "llm" / "openai" / "gpt-4o-mini" / "0.jsonl"
    shard.parent.mkdir(parents=True)
    shard.write_text("{}\n")
    _, said = plan(capsys, "--judge", "openai:gpt-4o-mini", "--profile", "paper")
    assert "the response store holds replies of openai:gpt-4o-mini" in said
    assert "judged: its judge has stored replies" in said


def test_the_manifest_file_is_deterministic_and_a_damaged_one_is_named(project: Path) -> None:
    entry = {"key": "k", "datasets": {DATASET: "complete"},
             "reader": [{"prompt": "p", "jobs": 1, "n_requests": 2, "n_judgments": 2, "input_tokens": 10,
                         "output_tokens": 4}],
             "book": []}
    assert manifest.record_entries(project, "paper", {"judged": entry}, ["judged"])
    first = (project / "prompt_manifest" / "paper.json").read_bytes()
    assert not manifest.record_entries(project, "paper", {"judged": dict(reversed(entry.items()))}, ["judged"])
    assert (project / "prompt_manifest" / "paper.json").read_bytes() == first
    assert manifest.load_manifest(project, "paper") == {"judged": entry}
    # An entry recorded with less of its data does not replace one of the same key recorded with it
    manifest.record_entries(project, "paper", {"judged": {**entry, "datasets": {DATASET: "missing"}}}, ["judged"])
    assert (project / "prompt_manifest" / "paper.json").read_bytes() == first
    damaged = {"profile": "paper", "version": 1, "chapters": {"judged": {"key": "k", "datasets": {}, "reader": [{}]}}}
    (project / "prompt_manifest" / "paper.json").write_text(json.dumps(damaged))
    with pytest.raises(manifest.ManifestError, match=r"paper.json: chapter 'judged': a row of 'reader' lacks one of "
                                                      r"the counts jobs, n_requests"):
        manifest.load_manifest(project, "paper")
