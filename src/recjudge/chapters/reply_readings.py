"""What every reply reader of the package reads from every reply of a response store, and which chapters read
replies with it: the table a parser change is reviewed against (``tests/test_parsers_on_stored_replies.py``) and
the count of scored replies a rule change moves (``changed_readings``; ``scripts/parser_changes.py`` compares two
revisions of the package).

A reader is applied to every stored reply, including replies to prompts no chapter reads with it, so a count per
reader is an upper bound on what moves in its chapters; the model folder says which judge gave the reply. The
exact count per chapter and judge run (``exact_change_record``) takes the stored replies each judge run of the
chapter's last execution read from their text, as the engine logged them (``recjudge.llm.report.log_readings``).

Run as a script (``python reply_readings.py STORE OUT.csv``), it writes the readings of whichever ``recjudge`` is on
the path: that is how the readings of an older revision are taken. It therefore imports only what every revision
since the readers' introduction provides.
"""

from __future__ import annotations

import functools
import math
import sys
from pathlib import Path
from typing import Callable

import pandas as pd

from recjudge.llm import ResponseStore, parse_likert, shapes
from recjudge.metamorphic.recommender import parse_titles
from recjudge.prompts import explanations as explanation_prompts
from recjudge.prompts.output_shapes import output_shape
from recjudge.serendipity import prompt_strategies

Reader = Callable[[str], object]


def _one_score(parser):
    return lambda text: (value if not math.isnan(value := parser(text)) else None)


def _read_aspects(parser):
    def read(text):
        scores = parser(text)
        found = {aspect: value for aspect, value in scores.items() if not math.isnan(value)}
        return "; ".join(f"{aspect}={value:g}" for aspect, value in found.items()) or None
    return read


def _shaped(template):
    """The answer parser of a constrained run of ``template`` (its declared output shape)."""
    parser = shapes.answer_parser(output_shape(template))

    def read(text):
        value = parser(text)
        return _read_aspects(lambda _: value)(text) if isinstance(value, dict) else _one_score(lambda _: value)(text)
    return read


def _titles(text):
    parsed = parse_titles(text)
    return " | ".join(parsed.titles) if parsed.is_list else None


# Lists of chapter names, not prose (this module has no page): kept as names, joined as ``READERS`` states them
_SERENDIPITY_CHAPTERS = ", ".join(("prompt_strategies", "recommender_reevaluation", "judge_robustness"))
_KANG_CHAPTERS = ", ".join(("proxy_vs_llm", "auxiliary_data", "llm_ensembles", "recommender_reevaluation",
                            "trust_judges", "judge_robustness"))
_CONSTRAINED_CHAPTERS = ", ".join(("judge_robustness", "prompt_strategies"))

#: reader name -> (the chapters that read replies with it, reply text -> what it read, None when nothing)
READERS: dict[str, tuple[str, Reader]] = {
    "parse_likert": (f"{_KANG_CHAPTERS}, explanation_evaluators (one aspect)", _one_score(parse_likert)),
    **{f"serendipity[{strategy}]": (_SERENDIPITY_CHAPTERS, _one_score(functools.partial(
        prompt_strategies.parse_serendipity, strategy=strategy))) for strategy in ("base", "ls", "cot", "ltm")},
    **{f"step[{step}]": ("prompt_strategies", _one_score(functools.partial(prompt_strategies.parse_step, step=step)))
       for step in ("relevance", "unexpectedness", "serendipity")},
    "explanation_aspects": ("explanation_evaluators, judge_robustness",
                            _read_aspects(explanation_prompts.parser_for("multi"))),
    "zhang_authors[multi]": ("explanation_evaluators", _read_aspects(explanation_prompts.authors_parser("multi"))),
    "zhang_authors[single]": ("explanation_evaluators", _one_score(explanation_prompts.authors_parser("single"))),
    "zhang_authors_by_name[multi]": ("explanation_evaluators",
                                     _read_aspects(explanation_prompts.names_parser("multi"))),
    "list_titles": ("metamorphic_recommender", _titles),
    # the constrained runs' readers: one per answer shape the chapters ask for
    **{f"shape[{template}]": (_CONSTRAINED_CHAPTERS, _shaped(template))
       for template in ("kang_basic", "tokutake_base", "tokutake_cot", "tokutake_ltm", "tokutake_ltm_step2",
                        "zhang_multi_zero_shot", "zhang_single_zero_shot")},
}


def store_replies(store_root: Path) -> pd.DataFrame:
    """The distinct reply texts of a store, one row per (model, reply), with how many stored entries hold it (a tiny
    model gives the same text to many requests)."""
    rows = [(reply.model, reply.text) for reply in ResponseStore(Path(store_root)) if isinstance(reply.text, str)]
    replies = pd.DataFrame(rows, columns=["model", "reply"])
    return replies.groupby(["model", "reply"], sort=True).size().rename("entries").reset_index()


def readings(store_root: Path, readers: dict[str, tuple[str, Reader]] | None = None) -> pd.DataFrame:
    """What each reader reads from each distinct reply of the store: columns reader, model, reply, entries (stored
    replies with that text), read ("" when it reads nothing)."""
    replies = store_replies(store_root)
    read_by_text: dict[str, dict[str, str]] = {}
    for name, (_, reader) in (readers or READERS).items():
        read_by_text[name] = {text: "" if (read := reader(text)) is None else str(read)
                              for text in replies["reply"].unique()}
    frames = [replies.assign(reader=name, read=replies["reply"].map(found)) for name, found in read_by_text.items()]
    return pd.concat(frames, ignore_index=True)[["reader", "model", "reply", "entries", "read"]]


def changed_readings(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """Per reader and model: the stored replies, how many each side reads a score from, and how many a change of
    the rules moved (read differently, newly read or no longer read), counted over stored entries and over distinct
    texts (``changed_texts``), with the chapters that use the reader. A table without ``entries`` counts each text
    once."""
    keys = ["reader", "model", "reply"]
    merged = before.merge(after, on=keys, how="outer", suffixes=("_before", "_after"))
    merged[["read_before", "read_after"]] = merged[["read_before", "read_after"]].fillna("")
    entries = pd.Series(1, index=merged.index)
    for column in ("entries_before", "entries_after"):  # the store may have grown between the two readings
        if column in merged:
            entries = pd.to_numeric(merged[column], errors="coerce").fillna(entries)
    merged["entries"] = entries.astype(int)
    merged["changed"] = merged["read_before"] != merged["read_after"]
    for side in ("before", "after"):
        merged[f"weighted_{side}"] = merged["entries"] * (merged[f"read_{side}"] != "")
    merged["weighted_changed"] = merged["entries"] * merged["changed"]
    table = merged.groupby(["reader", "model"], sort=True).agg(
        replies=("entries", "sum"), read_before=("weighted_before", "sum"), read_after=("weighted_after", "sum"),
        changed=("weighted_changed", "sum"), changed_texts=("changed", "sum"),
    ).reset_index()
    table["chapters"] = table["reader"].map(lambda name: READERS[name][0] if name in READERS else "")
    return table


def readings_at(revision: str, store_root: Path, folder: Path) -> pd.DataFrame:
    """The readings of the package at git ``revision`` (its ``src`` taken with ``git archive`` into ``folder`` and run
    in a child process, so nothing of the checkout changes); ValueError when git cannot give it."""
    import io
    import os
    import subprocess
    import tarfile

    from recjudge.paths import project_root

    try:
        archive = subprocess.run(["git", "archive", "--format=tar", revision, "--", "src"], cwd=project_root(),
                                 check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = exc.stderr.decode().strip() if isinstance(exc, subprocess.CalledProcessError) else str(exc)
        raise ValueError(f"git cannot archive {revision!r}: {detail}") from None
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    out = Path(folder) / "readings.csv"
    env = {**os.environ, "PYTHONPATH": str(Path(folder) / "src")}
    subprocess.run([sys.executable, __file__, str(store_root), str(out)], check=True, env=env)
    return pd.read_csv(out, dtype=str, keep_default_na=False)


def chapters_of(reader: str) -> list[str]:
    """The chapters that read replies with ``reader`` (a note in brackets, "(one aspect)", dropped)."""
    listed = READERS[reader][0] if reader in READERS else ""
    return [part.split("(")[0].strip() for part in listed.split(",") if part.split("(")[0].strip()]


def change_record(before: pd.DataFrame, after: pd.DataFrame, from_version: str, to_version: str,
                  rule: str = "") -> pd.DataFrame:
    """The rows of the committed record of reading-rule changes (``llm.reading_changes``) for one change: per reader
    (summed over models) and chapter that uses it, the stored replies, those read differently and their distinct
    texts."""
    from recjudge.llm import reading_changes

    table = changed_readings(before, after)
    per_reader = table.groupby("reader", sort=True)[["replies", "changed", "changed_texts"]].sum()
    rows = [(reader, chapter, int(counts["replies"]), int(counts["changed"]), int(counts["changed_texts"]),
             from_version, to_version, "", rule)
            for reader, counts in per_reader.iterrows() for chapter in chapters_of(reader)]
    return pd.DataFrame(rows, columns=reading_changes.COLUMNS)


def engine_readers() -> dict[str, str]:
    """The name the engine logs for each parser a chapter runs (``recjudge.llm.report.reader_name``) -> the name of
    its reader here (``READERS``). Imported when called: the script above runs older packages, which lack it."""
    from recjudge.llm.report import reader_name
    from recjudge.metamorphic.recommender import list_length
    from recjudge.serendipity.prompt_strategies import parse_step

    parsers: dict[str, list] = {
        "parse_likert": [parse_likert, functools.partial(parse_likert, low=1, high=5)],
        **{f"serendipity[{strategy}]": [prompt_strategies.parser_for(strategy)]
           for strategy in ("base", "ls", "cot", "ltm")},
        **{f"step[{step}]": [functools.partial(parse_step, step=step)]
           for step in ("relevance", "unexpectedness", "serendipity")},
        "explanation_aspects": [explanation_prompts.parser_for("multi")],
        "zhang_authors[multi]": [explanation_prompts.authors_parser("multi")],
        "zhang_authors[single]": [explanation_prompts.authors_parser("single")],
        "zhang_authors_by_name[multi]": [explanation_prompts.names_parser("multi")],
        "list_titles": [list_length],  # the recommender's replies: their titles, counted
        **{f"shape[{template}]": [shapes.answer_parser(output_shape(template))]
           for template in ("kang_basic", "tokutake_base", "tokutake_cot", "tokutake_ltm", "tokutake_ltm_step2",
                            "zhang_multi_zero_shot", "zhang_single_zero_shot")},
    }
    return {reader_name(parser): name for name, known in parsers.items() for parser in known}


def logged_readings(folder: Path) -> pd.DataFrame:
    """The stored replies each run's last execution read from their text (the engine's reading logs in ``folder``,
    one ``<run>.jsonl`` per run): columns chapter (the run), judge, reader (``READERS`` name; "" for a parser
    without one), store_key. Judge runs that score from log-probabilities are left out: their text is not their
    score. A run whose log holds none has one row with empty judge, reader and store_key."""
    import json

    names = engine_readers()
    rows = []
    for path in sorted(Path(folder).glob("*.jsonl")):
        found = 0
        for raw in path.read_text(encoding="utf-8").splitlines():
            try:
                line = json.loads(raw)
            except ValueError:
                continue
            reader = names.get(line.get("reader", ""), "")
            if line.get("scoring") == "expected" or not reader:
                continue
            rows.extend((path.stem, line["judge"], reader, key) for key in line.get("store_keys", ()))
            found += 1
        if not found:
            rows.append((path.stem, "", "", ""))
    return pd.DataFrame(rows, columns=["chapter", "judge", "reader", "store_key"])


def exact_change_record(before: pd.DataFrame, after: pd.DataFrame, logged: pd.DataFrame, store_root: Path,
                        from_version: str, to_version: str, rule: str = "") -> pd.DataFrame:
    """The exact rows of the record of a change (``llm.reading_changes``): per chapter, judge run and reader, the
    stored replies it read (``logged``, from ``logged_readings``), those ``before`` and ``after`` read differently
    (the readings tables of the two versions) and their distinct texts."""
    from recjudge.llm import reading_changes

    texts = {reply.key: (reply.model, reply.text) for reply in ResponseStore(Path(store_root))
             if isinstance(reply.text, str)}
    keys = ["reader", "model", "reply"]
    read = before.merge(after, on=keys, how="outer", suffixes=("_before", "_after"))[
        [*keys, "read_before", "read_after"]].fillna("")
    moved = {(reader, model, reply) for reader, model, reply, old, new in read.itertuples(index=False)
             if old != new}
    rows = []
    for (chapter, judge, reader), group in logged.groupby(["chapter", "judge", "reader"], sort=True):
        if not reader:
            rows.append(("", chapter, 0, 0, 0, from_version, to_version, "", rule))
            continue
        replies = [texts[key] for key in group["store_key"] if key in texts]
        changed = [(model, text) for model, text in replies if (reader, model, text) in moved]
        rows.append((reader, chapter, len(replies), len(changed), len(set(changed)), from_version, to_version,
                     judge, rule))
    return pd.DataFrame(rows, columns=reading_changes.COLUMNS)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python reply_readings.py STORE_FOLDER OUT.csv")
    readings(Path(sys.argv[1])).to_csv(sys.argv[2], index=False)
