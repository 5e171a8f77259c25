"""The treebanks pinned here: their repositories, the commits their files are read at, and the files' sha256.

>>> KNOWN_TREEBANKS["ko_pud"].splits, BY_REPOSITORY["UD_English-EWT"].name
(('test',), 'en_ewt')
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from probing.errors import ProbingError
from probing.registry import Registry

DEFAULT_BASE_URL = "https://raw.githubusercontent.com/UniversalDependencies"


@dataclass(frozen=True)
class TreebankFile:
    split: str
    filename: str
    sha256: str | None  # None: not pinned, trusted on first use
    offline: str | None = None  # how to do without the download, where that is not a treebank folder


@dataclass(frozen=True)
class Treebank:
    """One UD treebank: its code, repository, the commit its files are read at, and those files.

    ``commit`` is None only for a treebank known from a local copy alone (nothing to download).
    """

    name: str
    repo: str | None
    commit: str | None
    files: tuple[TreebankFile, ...]

    @property
    def splits(self) -> tuple[str, ...]:
        return tuple(f.split for f in self.files)

    @property
    def pinned(self) -> bool:
        return all(f.sha256 is not None for f in self.files)

    def file(self, split: str) -> TreebankFile:
        for f in self.files:
            if f.split == split:
                return f
        raise ProbingError(
            f"unknown split {split!r} of {self.name}; known splits: {', '.join(self.splits)}"
            + (f" (and the halves {self.name}:even, {self.name}:odd)" if len(self.files) == 1 else "")
        )

    def url(self, tb_file: TreebankFile) -> str:
        base = os.environ.get("PROBING_UD_BASE_URL") or DEFAULT_BASE_URL
        return f"{base.rstrip('/')}/{self.repo}/{self.commit}/{tb_file.filename}"


def _tb(name: str, repo: str, commit: str, **sha_by_split: str | None) -> Treebank:
    files = tuple(
        TreebankFile(split, f"{name}-ud-{split}.conllu", sha) for split, sha in sha_by_split.items()
    )
    return Treebank(name, repo, commit, files)


KNOWN_TREEBANKS: Registry[Treebank] = Registry("treebank", option="--treebank")
"""The pinned treebanks: commits and checksums of the files the UD maintainers published at those commits.

English: dev and test only (the probe selects heads on dev and reports on test; train splits are too
large to need). PUD: every PUD treebank of the UD repositories, test-only, 1,000 parallel sentences each.
"""
for _pinned in (
    _tb(
        "en_ewt",
        "UD_English-EWT",
        "15d613d8447b3478787d4c278730a1e48a945efb",
        dev="531a54ff90d6ab12201c5a50c3e78e6ddac4de69abc4bce5d275d3cd29efe2b6",
        test="e266e515a0a7547657ed3d90d9ba46487d6bd251f27ad4269d4e8a427c8555cd",
    ),
    _tb(
        "en_gum",
        "UD_English-GUM",
        "afb41ee9bca57991125814fa04d96a0e61470c8b",
        dev="581997015a2d878ad49619032d265a9753e1b6b03d75ca18b04a00bb9ee8991d",
        test="fe95c0e744f81cdf2a307ce522604ecc05cd359c7c6d1abaa3a46c85d024f34c",
    ),
    _tb("ar_pud", "UD_Arabic-PUD", "be733f45d21f42d506c62930f806ed2182a5ee3d",
        test="a6d574a46815f6d6e7fa2e92944a2bbde0acaad5013010d92a99f1ef711ce17b"),
    _tb("de_pud", "UD_German-PUD", "ff80846ae60a0a70fc4d6251ef73e6a483a620ee",
        test="a530bdb50349bbd7c13706b6a759a9d73e8f514fff41fbf27149e914b0c3e723"),
    _tb("en_pud", "UD_English-PUD", "f16eba4ae7f3d161870ed320676c5088b8fa476c",
        test="c80584f2bc2b31d5bada78a1136f9feec7ac49e5e18898db02dea434b5b8f0aa"),
    _tb("es_pud", "UD_Spanish-PUD", "818a82b8628c9cbec78750c7e83ccba34b9ce22b",
        test="48a7b5c7f409100b24eba90c7397e01f6fecaaf3207315a9a1bda029f77e98d3"),
    _tb("fi_pud", "UD_Finnish-PUD", "fa2c5ad1df6b18333b29fe87d093051097f36365",
        test="a33821b600b818be9d3b0620d33ca54057605ab68845cdee3d649220dbd62e6e"),
    _tb("fr_pud", "UD_French-PUD", "c245786cfb3020d43bcfc96215ae531a1b07bcbc",
        test="793540702db111d2bfe04f846edddb23e7a2a432294fe17cb612dd795fb0301f"),
    _tb("hi_pud", "UD_Hindi-PUD", "8bc630f73e0737ce5ed9eaa97abf11f172ecc9bd",
        test="3562b7f49420912acad70a45a483f683dcb44624ea92f82e21b29f2ee41a9dff"),
    _tb("id_pud", "UD_Indonesian-PUD", "765fb3fe486201f094cb177aff5aa84bc6b06800",
        test="07efad4d64863ab442aef820afdb34c269f80366c6efb583225f943e5baf88b2"),
    _tb("ko_pud", "UD_Korean-PUD", "9bc99c21a00b88d44def216b64f898e4b6151d0d",
        test="662fcdaf236a223699b410c812ca66e3e69c380c078ae552a88f207ba240981c"),
    _tb("pt_pud", "UD_Portuguese-PUD", "be08a756d76bd79bf5d4a492dfdc28b46b33e76e",
        test="6fb673563b068c0693144aba16c9406f8672ef9d6a7703d8ccf71a44a07df937"),
    _tb("ru_pud", "UD_Russian-PUD", "da5b3816eeaa24283c1d81a48bb1de4d062fc5d5",
        test="a37e076d24f0c3cfd5d48a11bbfec36026da5dc46180b7a12dc991dc372de1ea"),
    _tb("sv_pud", "UD_Swedish-PUD", "1290a67471931e543b4d2a734829f9177c604e94",
        test="4f978396f363c85a9c7ece193327529e4cdbe9ce0f6ad807eb8846e865043fff"),
    _tb("tr_pud", "UD_Turkish-PUD", "63a134a087c8475ea832713b960baba8ff2f9401",
        test="7c1b6fe01662a7617758fbecdda6af6fc3914ace46b1809d6514af0a1c1df88c"),
    _tb("zh_pud", "UD_Chinese-PUD", "2849afd946a8c01b3e9acdf3e7afa8670cf2777d",
        test="e12582af2e2bbc2e27155ca7dc12b6fc4a037dbc716e1f805d67e34ffb2596b3"),
):
    KNOWN_TREEBANKS.register(_pinned.name, _pinned)
BY_REPOSITORY = {tb.repo: tb for _, tb in KNOWN_TREEBANKS.items()}
