"""Datasets: registry (official URLs, files, sha256, licences), fetching (mirror folder → data/raw → official
download → committed sample) and loaders returning tidy DataFrames.

Quick use::

    from recjudge.data import availability, load_serendipity_answers, load_movielens
    availability()                      # which datasets are complete, partial, a sample or missing
    answers = load_serendipity_answers()               # real data (mirror or download)
    answers = load_serendipity_answers("synthetic")    # committed synthetic survey (labelled)
    ml = load_movielens("latest-small")                # works everywhere: falls back to data/sample

Modules: ``registry`` (what each dataset is and where it comes from), ``fetch`` (mirror, download, checksums, safe
extraction), ``loaders`` (tidy DataFrames, schema errors naming file, column and row), ``lu2023`` (the explanation
study of Lu et al.), ``summary`` (sizes and distributions for the data tour), ``errors``, ``cli`` (``recjudge
data``).
"""

from recjudge.data.errors import (ChecksumError, DataError, DataQualityWarning, DataSchemaError, MissingDataError,
                                  UnsafeArchiveError)
from recjudge.data.registry import REGISTRY, ArchiveSpec, DatasetSpec, FileSpec, get_spec
from recjudge.data.fetch import (  # noqa: I001  (after registry: the function shadows the module name on purpose)
    availability,
    dataset_dir,
    describe,
    fetch,
    fetch_all,
)
from recjudge.data.loaders import (
    TRAINING_FALLBACK,
    MovieLens,
    load_amazon_beauty_sequences,
    load_gpt35_serendipity,
    load_movielens,
    load_movielens_2018_movies,
    load_serendipity_answers,
    load_serendipity_movies,
    load_serendipity_recommendations,
    load_serendipity_training,
    load_taobao_survey,
    movielens_name,
    synthetic_dir,
)
from recjudge.data.summary import size_row, value_distribution

__all__ = [
    "REGISTRY", "ArchiveSpec", "DatasetSpec", "FileSpec", "get_spec",
    "ChecksumError", "DataError", "DataQualityWarning", "DataSchemaError", "MissingDataError", "UnsafeArchiveError",
    "availability", "dataset_dir", "describe", "fetch", "fetch_all",
    "TRAINING_FALLBACK", "MovieLens", "load_amazon_beauty_sequences", "load_gpt35_serendipity", "load_movielens",
    "load_movielens_2018_movies", "movielens_name",
    "load_serendipity_answers", "load_serendipity_movies", "load_serendipity_recommendations",
    "load_serendipity_training", "load_taobao_survey", "synthetic_dir",
    "size_row", "value_distribution",
]
