"""The dataset registry: one :class:`DatasetSpec` per dataset the compendium knows.

Each entry records where the data officially come from (page and archive or file URLs), how the archive is laid out,
which files are expected with their sha256, the licence terms in brief, whether the data may be redistributed (only
``movielens-latest-small`` may, so only it is committed, under ``data/sample/``), the citation and what is known to be
missing from the copies at hand.

Checksums. Most publishers give no per-file checksum. Where none exists the registry records the sha256 of a copy
that was checked against the publisher's README (row counts, users, items, date ranges) and says so with
``checksum="verified-copy"``; a publisher's own checksum is marked ``checksum="publisher"``. A file whose sha256 is
unknown (never obtained, e.g. Serendipity-2018 ``training.csv``) has ``sha256=None`` and is not verified.

Roles. ``core`` files make up the official release (all present → status "complete", some → "partial");
``extra`` files are useful additions from other sources; ``derived`` files were made from other files (e.g. a
pseudonymised export, a partial reconstruction) and exist only in a mirror folder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Checksum = Literal["publisher", "verified-copy", "third-party", "none"]
Role = Literal["core", "extra", "derived"]

MOVIELENS_LICENCE = (
    "GroupLens research licence: research use only; acknowledge the data set in publications; no endorsement may be "
    "implied; no commercial use without permission; {redistribution}"
)
MOVIELENS_CITATION = (
    "F. Maxwell Harper and Joseph A. Konstan. 2015. The MovieLens Datasets: History and Context. "
    "ACM Transactions on Interactive Intelligent Systems 5(4), 19:1-19:19. doi:10.1145/2827872"
)


@dataclass(frozen=True)
class FileSpec:
    """One expected file of a dataset, as a path relative to the dataset folder."""

    path: str
    sha256: str | None = None
    checksum: Checksum = "verified-copy"
    role: Role = "core"
    #: Direct download URL for a file that is not inside the dataset's archive (pinned to a commit where possible).
    url: str | None = None
    size: int | None = None
    note: str = ""

    def __post_init__(self) -> None:
        if self.sha256 is None and self.checksum != "none":
            object.__setattr__(self, "checksum", "none")


@dataclass(frozen=True)
class ArchiveSpec:
    """An official archive; ``root`` is the folder inside it that holds the files (stripped on extraction)."""

    url: str
    root: str = ""
    sha256: str | None = None
    md5: str | None = None
    #: Where the archive checksums come from.
    checksum: Checksum = "none"


@dataclass(frozen=True)
class DatasetSpec:
    """Everything the project knows about one dataset."""

    name: str
    title: str
    page_url: str
    files: tuple[FileSpec, ...]
    licence: str
    redistributable: bool
    citation: str
    archive: ArchiveSpec | None = None
    notes: str = ""
    #: A redistributable copy is committed under data/sample/<name>.
    has_sample: bool = False
    #: Why the dataset cannot be downloaded automatically (empty when it can).
    no_download_reason: str = ""
    tags: tuple[str, ...] = field(default_factory=tuple)

    @property
    def core_files(self) -> tuple[FileSpec, ...]:
        return tuple(f for f in self.files if f.role == "core")

    def file(self, path: str) -> FileSpec:
        for spec in self.files:
            if spec.path == path:
                return spec
        raise KeyError(f"{self.name} has no registered file {path!r}")

    @property
    def downloadable(self) -> bool:
        return self.archive is not None or any(f.url for f in self.files)


def _raw(repo: str, commit: str, path: str) -> str:
    return f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"


_TVERGARA = ("tvergara/RecSysProject", "d17d5ddd0b84e89f379d971eadb54e2a9b722e4d")
_TAOBAO = ("greenblue96/Taobao-Serendipity-Dataset", "a4197dcb5b200b6612fb59b5d8f8490c8fea5139")
_LU = ("Xiaoyu-SZ/LLMasEvaluator", "6c2f3eb1c4b34439f2e54628aa2411006343702f")
_ICLREC = ("salesforce/ICLRec", "2890e6c3ff6a22c6699fc19cb863b66786c1cde4")

_SPECS: tuple[DatasetSpec, ...] = (
    DatasetSpec(
        name="serendipity-2018",
        title="Serendipity-2018 (GroupLens / University of Jyväskylä)",
        page_url="https://grouplens.org/datasets/serendipity-2018/",
        archive=ArchiveSpec(
            url="https://files.grouplens.org/datasets/serendipity-sac2018/serendipity-sac2018.zip",
            root="serendipity-sac2018/",
        ),
        files=(
            FileSpec("answers.csv", "b28fa4dbc472253d55b3a81b94de21f18ab2dc30ab4840baccc880350284fe95", size=231994,
                     note="2,150 survey answers of 481 users; UTF-8 with BOM, CRLF, timestamps in milliseconds"),
            FileSpec("recommendations.csv", "a4ded8efc7f86a1136c45695b44aa466001c3761ddf4b2d13ddcd22d870215e6",
                     size=52533, note="8 recommendations for each of 480 users (3,840 rows); BOM, CRLF"),
            FileSpec("README.txt", "c7719c1592882fe51791fc97a95da83204e6a212c17ba5ec55aba50e412269ce", size=13752),
            FileSpec("movies.csv", note="49,174 movies with directors, cast, release date, genres"),
            FileSpec("training.csv", note="9,997,850 ratings of 104,661 users (timestamps in milliseconds)"),
            FileSpec("tags.csv"),
            FileSpec("tag_genome.csv"),
            FileSpec("gpt35_serendipity_ratings_tvergara2023.csv",
                     "723a58271d3f6103a4b7ad75bfcde92ad8ee1632770e6d130e1a38c3bef6db98", role="extra", size=278153,
                     url=_raw(*_TVERGARA, "data/evaluated_data.csv"),
                     note="answers.csv rows plus a gpt-3.5-turbo serendipity score (column gpt-rating), from "
                          "github.com/tvergara/RecSysProject data/evaluated_data.csv; no licence file"),
        ),
        licence=("Research use only; acknowledge in publications; no endorsement; no commercial use without "
                 "permission; the data may NOT be redistributed without separate permission."),
        redistributable=False,
        citation=("Denis Kotkov, Joseph A. Konstan, Qian Zhao and Jari Veijalainen. 2018. Investigating Serendipity "
                  "in Recommender Systems Based on Real User Feedback. In Proceedings of SAC 2018. "
                  "doi:10.1145/3167132.3167276"),
        notes=("No official per-file checksum is published; the sha256 values are those of copies verified against "
               "the README (2,150 answers, 481 users, 1,678 movies; 3,840 recommendations). The mirror copy is "
               "PARTIAL: movies.csv, training.csv, tags.csv and tag_genome.csv are missing. Fallbacks: titles and "
               "genres from movielens-latest-2018-movies; methods needing training.csv must say which fallback "
               "they use. README says recommendations are missing for user 249371; in the data it is user 196794."),
    ),
    DatasetSpec(
        name="taobao-serendipity",
        title="Taobao Serendipity Dataset (survey of 11,383 users)",
        page_url="https://www.comp.hkbu.edu.hk/~lichen/download/TaoBao_Serendipity_Dataset.html",
        files=(
            FileSpec("umap2020_TSD_Wang.csv", "bd6ca851d0cbf2d58fe22e662c9232b835d8b1ad064487b7d787a7a0b4369400",
                     size=916390, url=_raw(*_TAOBAO, "umap2020_TSD_Wang.csv"),
                     note="one row per user: clicked/purchased, 9 Likert answers, CEI-II and TIPI items"),
            FileSpec("README.md", "178ebecb52a6d342ec34c38d60d74dc83d143e4c5c5725753fb67dfd91d13648", size=10584,
                     url=_raw(*_TAOBAO, "README.md")),
            FileSpec("LICENSE", "aa35000a687eedf8c54992f483193a5fec97e2c4a6324a6e1c7e536607a10852", size=1069,
                     url=_raw(*_TAOBAO, "LICENSE")),
        ),
        licence=("Research use only; acknowledge in publications; no endorsement; no commercial use. The "
                 "redistribution clause is self-contradictory ('may not redistribute ... as long as ...') and the "
                 "repository also has an MIT LICENSE: treated as NOT redistributable until clarified."),
        redistributable=False,
        citation=("Li Chen, Yonghua Yang, Ningxia Wang, Keping Yang and Quan Yuan. 2019. How Serendipity Improves "
                  "User Satisfaction with Recommendations? A Large-Scale User Evaluation. In WWW '19. "
                  "doi:10.1145/3308558.3313469; Ningxia Wang, Li Chen and Yonghua Yang. 2020. The Impacts of Item "
                  "Features and User Characteristics on Users' Perceived Serendipity of Recommendations. UMAP '20."),
        notes=("Files from github.com/greenblue96/Taobao-Serendipity-Dataset at commit a4197dc (the maintainers' "
               "release location); no publisher checksum. No click histories, item text or gender column."),
    ),
    DatasetSpec(
        name="movielens-100k",
        title="MovieLens 100K",
        page_url="https://grouplens.org/datasets/movielens/100k/",
        archive=ArchiveSpec(url="https://files.grouplens.org/datasets/movielens/ml-100k.zip", root="ml-100k/",
                            md5="0e33842e24a9c977be4e0107933c0723", checksum="publisher"),
        files=tuple(
            FileSpec(path, sha, size=size) for path, sha, size in (
                ("README", "4883b8cf340ed0059971b33f56ad3adc88a40792108ebca3d24aafc4c82e8b52", 6750),
                ("u.data", "06416e597f82b7342361e41163890c81036900f418ad91315590814211dca490", 1979173),
                ("u.genre", "9757e0d3e6b298159a80dd48eaf938114690e911e39af97a76949ef1663610bb", 202),
                ("u.info", "5b0a40b2e47a729ee6203063f6dcf8790c2e63f5a18663e6ee318a72c5f3c27b", 36),
                ("u.item", "553841ebc7de3a0fd0d6b62a204ea30c1e651aacfb2814c7a6584ac52f2c5701", 236344),
                ("u.occupation", "cd5fbec9afe345d993a62fc7817df1a4a9079c4feb267b3118763b8fd942137d", 193),
                ("u.user", "f120e114da2e8cf314fd28f99417c94ae9ddf1cb6db8ce0e4b5995d40e90e62c", 22628),
                ("u1.base", "ce253ec86c448b44fb3ba9a30d12dcfc2e9210cbde71efada3730c22e9ac212a", 1586544),
                ("u1.test", "18c6014a4b2c7324f250a63f8904a7b16b2b19f911129e346141507b0cbac950", 392629),
                ("u2.base", "6c06f0b5df4b256da1a994f3ac66edc8da4d3f09bc9282df6b14d893366d703e", 1583948),
                ("u2.test", "4de658d1e04ed9104629509a2e2528fce833ac8e048280183f1df167632038c3", 395225),
                ("u3.base", "afdc155c291c6edc41c0407e39d7462eb98d341e064f0b0a12175b80b3c4af5d", 1582546),
                ("u3.test", "0f548b51c78327de4c156461d3e430b7e5579fe2b5681586a59416e48fd35f6d", 396627),
                ("u4.base", "219f0f4d40dfe9c5141d425f53fa91ee23ed275f14e280bbf1b50117afb064ca", 1581878),
                ("u4.test", "7c02ad0a1e7ab1083c8b9d4b627203a051dd7b5eab46d99fa44de33470de8db9", 397295),
                ("u5.base", "a9574e59ce961eec2121627760b6e9b0974ce1637b3fe69ac32cb14a4bfab485", 1581776),
                ("u5.test", "351cc52e0d15b6c721466276fc24671d40936899e3d01fadeaf312915b8c5634", 397397),
                ("ua.base", "67b5bcdb380c29f85d56a012ecd88612ae020f30a6730d117a334ee8203b91f2", 1792501),
                ("ua.test", "d0497e202417720f57a184ec8c66be2d1afa4ff41bb53787c57b28d6bf79bc42", 186672),
                ("ub.base", "237254d253b6ad7de84f919d041055428646254f34ed8f562703c899430cd881", 1792476),
                ("ub.test", "d54a72d05730d5892062734b2bec73e976f9b713d18c828a18b968d6cce442da", 186697),
            )
        ),
        licence=MOVIELENS_LICENCE.format(redistribution="the data may NOT be redistributed without permission."),
        redistributable=False,
        citation=MOVIELENS_CITATION,
        notes=("The archive's md5 is the publisher's; per-file sha256 values are those of two independent copies "
               "that agree with each other and with the README (100,000 ratings, 943 users, 1,682 items). "
               "u.item is ISO-8859-1. The helper scripts allbut.pl and mku.sh are not expected."),
    ),
    DatasetSpec(
        name="movielens-1m",
        title="MovieLens 1M",
        page_url="https://grouplens.org/datasets/movielens/1m/",
        archive=ArchiveSpec(url="https://files.grouplens.org/datasets/movielens/ml-1m.zip", root="ml-1m/",
                            md5="c4d9eecfca2ab87c1945afe126590906",
                            sha256="a6898adb50b9ca05aa231689da44c217cb524e7ebd39d264c56e2832f2c54e20",
                            checksum="publisher"),
        files=(
            FileSpec("README", "2d5ddce86ccbd247207456165827b4b9ddf27282bca93807d4c763e28414f133", size=5577),
            FileSpec("movies.dat", "0140fc2356357c1a851d0f52e893a1e4d3696df632c4141cea8d5bc3d621f0b9", size=171308),
            FileSpec("users.dat", "1dc3a95300cb19f7c10e027daf29b8cdf1d908dab65b5edfb45950aa389a10a3", size=134368),
            FileSpec("ratings.dat", note="1,000,209 ratings; not in the mirror (see derived-partial/)"),
            FileSpec("derived-partial/ratings_partial_663062.csv",
                     "67254494f142767218c9ff977d24ce3efb54cf12957f639f1860b64ea0fd73e2", role="derived",
                     size=19820246,
                     note="663,062 full rating rows: the latest 20% by time (val/test) and train-period ratings >= 4"),
            FileSpec("derived-partial/pairs_all_1000209.csv",
                     "e1405ceb837edd8021e89a1f4d8acc82e23d9eee45f3114ab8db3a94e6debb58", role="derived",
                     size=9553055, note="all 1,000,209 (user, movie) pairs in ratings.dat order, no rating/time"),
            FileSpec("derived-partial/pairs_all_1000209_aurasparktraining.parquet",
                     "b354c7081dd0a6ca6b2711d6ae48d057ade864332ae90e28856372997d88994f", role="derived",
                     size=1549462),
            FileSpec("derived-partial/val_ratings_unfiltered_amahuli00.parquet",
                     "5173cf87c11197de444f2e50dc28e19552f1cfe2165c4f3121748593143bc2e5", role="derived",
                     size=655228),
            FileSpec("derived-partial/test_ratings_unfiltered_amahuli00.parquet",
                     "ed1650370e142076090cae084420d087477344f9bf98ab33f04c2ed8d7392dea", role="derived",
                     size=733225),
            FileSpec("derived-partial/train_positives_r4plus_amahuli00.parquet",
                     "8bf3cf494f339e6bb5e7b9c79fa243a9729192ab2d1e463a49c59c3d2a6fcf16", role="derived",
                     size=2865609),
        ),
        licence=MOVIELENS_LICENCE.format(redistribution="the data may NOT be redistributed without permission."),
        redistributable=False,
        citation=MOVIELENS_CITATION,
        notes=("The archive md5 is the publisher's; its sha256 is as quoted by public loaders. The mirror copy is "
               "PARTIAL: ratings.dat is missing. derived-partial/ holds all 1,000,209 (user, movie) pairs and "
               "663,062 full rating rows; the 337,147 train-period ratings with values 1-3 (rated from 2000-04-25 to "
               "2000-12-02) are missing. Fit only for implicit-feedback or positives-only experiments."),
    ),
    DatasetSpec(
        name="movielens-latest-small",
        title="MovieLens Latest Small (ml-latest-small, 2018-09-26 release)",
        page_url="https://grouplens.org/datasets/movielens/latest/",
        archive=ArchiveSpec(url="https://files.grouplens.org/datasets/movielens/ml-latest-small.zip",
                            root="ml-latest-small/"),
        files=(
            FileSpec("README.txt", "e165937702ae1fac9237b6bd377f03d027f7ef97175d4a04a203e8b12d5516ea", size=8344,
                     note="holds the licence; must travel with the data"),
            FileSpec("links.csv", "97ad18e4e56a09363c65676b6cb3482ce3e2cea2372a24620c1599c843325f31", size=197979),
            FileSpec("movies.csv", "5a5f32dd9bb3797b8e728a1b98958789d2b13f294a69fdfbc5727f8a9611aa07", size=494431),
            FileSpec("ratings.csv", "aa289ca83157595d0df6aea1be6a4ded676ddc4385472e8313a8ed9805352646",
                     size=2483723),
            FileSpec("tags.csv", "92a9f8bb7916dceef6151209845788c3643f794dfa79d1feaec7121b5960399d", size=118660),
        ),
        licence=MOVIELENS_LICENCE.format(
            redistribution="the data MAY be redistributed, including transformations, under these same conditions."),
        redistributable=True,
        citation=MOVIELENS_CITATION,
        has_sample=True,
        notes=("Verified against the README: 100,836 ratings, 3,683 tags, 9,742 movies, 610 users. An older 2016 "
               "release (100,004 ratings, 671 users) also circulates; its files fail the checksums. Committed as "
               "the embedded sample under data/sample/movielens-latest-small with its README.txt (licence)."),
    ),
    DatasetSpec(
        name="movielens-latest-2018-movies",
        title="MovieLens Latest full (ml-latest, 2018-09-26): movie list only",
        page_url="https://grouplens.org/datasets/movielens/latest/",
        files=(
            FileSpec("movies.csv", "f162b2798a458693c63d7d0e95885e1f05647b08d4d03a61dca4f60ce80d5f5e", size=2800124,
                     note="58,098 movies: movieId, title, genres"),
            FileSpec("README.txt", "be97d953eda64accad793a2354fe105fd464fcaee7982e73b9af165b250164b8", size=9784),
        ),
        licence=MOVIELENS_LICENCE.format(redistribution="the data may NOT be redistributed without permission."),
        redistributable=False,
        citation=MOVIELENS_CITATION,
        no_download_reason=("ml-latest.zip is a moving release and the current archive is not the 2018-09-26 one; "
                            "place movies.csv and README.txt of the 2018 release in the mirror folder by hand"),
        notes=("Title and genre lookup for Serendipity-2018 movie ids (covers 1,670 of 1,678 answered and 1,174 of "
               "1,181 recommended movies) while the Serendipity movies.csv is unavailable. No publisher checksum."),
    ),
    DatasetSpec(
        name="llm-explanation-eval-lu2023",
        title="Explanation user study (Lu et al. TOIS 2023) as released with Zhang et al. RecSys 2024",
        page_url="https://github.com/Xiaoyu-SZ/LLMasEvaluator",
        files=(
            FileSpec("df_explanation_selected.csv", "2b58ccce486103155fcf078bc9bd0815761969312f405cc84d23218a8e4aa791",
                     size=419539, url=_raw(*_LU, "data/df_explanation_selected.csv")),
            FileSpec("third_party.csv", "bd03812b80a440bd7b9f3d3304247fc366e7c423f93d6ce984c772d4ea5f8751",
                     size=368364, url=_raw(*_LU, "data/third_party.csv")),
            FileSpec("user_demo.csv", "1ab75811ac0244ac8e24d36ec15404290591f2b4125e35ba792ed36721cd950a", size=2118,
                     url=_raw(*_LU, "data/user_demo.csv")),
            FileSpec("SOURCE_README.md", "8a390595c9d585c5f8c481f6029ad179ef76d4632f9741ce13e9297cc81f53d7",
                     size=4271, url=_raw(*_LU, "README.md")),
            FileSpec("df_explanation.pkl", "8ecb15590dad73a68c07ca7addb3eee70ddb5a8ba875d5776ecc0cb11fa46183",
                     role="extra", size=1966964, url=_raw(*_LU, "data/df_explanation.pkl"),
                     note="pandas<2 pickle with phone-number-shaped ids; never load untrusted pickles"),
            FileSpec("df_explanation_full.pseudonymised.jsonl",
                     "0aa57a6fe1c467b5c9a7fbf7531dcef6cc88aadb80edc11d7510879d9be58f07", role="derived",
                     size=10157205, note="the pickle exported as JSON lines with pseudonymised user and peer ids"),
        ),
        licence=("No licence stated (default copyright); the authors ask to cite both papers. Not redistributable "
                 "without the authors' permission."),
        redistributable=False,
        citation=("Xiaoyu Zhang et al. 2024. Large Language Models as Evaluators for Recommendation Explanations. "
                  "RecSys '24. doi:10.1145/3640457.3688075; Hongyu Lu et al. 2023. User Perception of "
                  "Recommendation Explanation: Are Your Explanations What Users Need? ACM TOIS 41(2):48. "
                  "doi:10.1145/3565480"),
        notes=("Files from the authors' repository at commit 6c2f3eb; no publisher checksum. The self-explanation "
               "texts exist only in the pickle (downloadable) or its pseudonymised JSON-lines export (mirror only)."),
    ),
    DatasetSpec(
        name="amazon-beauty-5core-s3rec",
        title="Amazon Beauty 5-core as preprocessed by S3-Rec/ICLRec (item-id sequences only)",
        page_url="https://github.com/salesforce/ICLRec",
        files=(
            FileSpec("Beauty.txt", "226cce9c3105299ca0db9615d7d3fb32b3175e90da43100ae352599f0f0107b8", size=1090094,
                     url=_raw(*_ICLREC, "data/Beauty.txt"),
                     note="22,363 users, 12,101 items, 198,502 interactions; one line per user"),
            FileSpec("SOURCE_DATA_README.md", "809257cf0d47e0aed4afdddace01e0fed0792a26a7defa9b20c332914c300cb3",
                     size=994, url=_raw(*_ICLREC, "data/README.md")),
        ),
        licence="No licence stated for the data (Amazon review data released for research use); do not republish.",
        redistributable=False,
        citation=("Ruining He and Julian McAuley. 2016. Ups and Downs: Modeling the Visual Evolution of Fashion "
                  "Trends with One-Class Collaborative Filtering. WWW '16; Julian McAuley et al. 2015. Image-based "
                  "Recommendations on Styles and Substitutes. SIGIR '15."),
        notes="Optional. No ratings, timestamps or item text: usable for proxy metrics, not for text prompts.",
    ),
)

#: Every dataset by name (names = folder names of the mirror).
REGISTRY: dict[str, DatasetSpec] = {spec.name: spec for spec in _SPECS}


def get_spec(name: str) -> DatasetSpec:
    """The registry entry for ``name``; a clear error lists the known names."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown dataset {name!r}; known: {', '.join(REGISTRY)}") from None
