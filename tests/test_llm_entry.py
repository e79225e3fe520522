"""The store entry's schema has one home (recjudge.llm.entry): the fast reader agrees with it, and the runner and
batch mode build entries through one builder."""

from recjudge.llm.entry import ENTRY_FIELDS, OPTIONAL_FIELDS, StoredReply, _Entry, entry_problem, reply_entry
from recjudge.llm.providers.base import Completion

ARGS = dict(key="ab" * 32, provider="openai", model="m", sample=1, request_key="u1:i1", max_chars=100)


def test_the_fast_reader_lists_the_schema_fields_in_their_written_order():
    assert tuple(_Entry.__struct_fields__) == ENTRY_FIELDS
    assert ENTRY_FIELDS[:5] == ("key", "provider", "model", "sample", "request_key")
    assert set(OPTIONAL_FIELDS) <= set(ENTRY_FIELDS)


def test_a_direct_reply_keeps_its_latency_and_leaves_out_empty_provenance():
    entry = reply_entry(Completion(text="Score: 4", input_tokens=9, output_tokens=2, latency_s=0.123456), **ARGS)
    assert list(entry) == [name for name in ENTRY_FIELDS if name not in OPTIONAL_FIELDS]
    assert entry["latency_s"] == 0.123 and entry["sample"] == 1 and entry["request_key"] == "u1:i1"
    assert entry_problem(entry) is None
    assert StoredReply.from_json(entry).to_json() == entry


def test_a_batch_reply_names_its_batch_and_has_no_latency_of_its_own():
    completion = Completion(text="x" * 500, latency_s=3.0, provenance={"reported_model": "m-2024"})
    entry = reply_entry(completion, **ARGS, batch_id="batch_1")
    assert entry["latency_s"] is None
    assert entry["provenance"] == {"reported_model": "m-2024", "batch_id": "batch_1"}
    assert entry["truncated_from_chars"] == 500 and len(entry["text"]) == 100  # sanitised on the way
    assert completion.provenance == {"reported_model": "m-2024"}  # the completion is not changed
