"""Universal Dependencies treebanks by name: pinned and checksummed where known, trusted on first use otherwise.

A treebank is named by its UD code as the UD project spells it (``de_gsd``,
``ko_pud``) or by its repository name (``UD_German-GSD``), with ``:split``
when it has several (``en_ewt:dev``). A treebank with a single split (every
PUD treebank) needs no split, and may also be named by a half of it:
``ko_pud:even`` or ``ko_pud:odd`` are the sentences with an even or odd
0-based index in the file (the halves that held-out selection chooses and
reports on, docs/languages.md), ``ko_pud:test`` the whole file. A plain file
path is passed through untouched, so every command can take either.

>>> from probing.data.datasets.names import parse_name
>>> from probing.data.datasets.pinned import KNOWN_TREEBANKS
>>> KNOWN_TREEBANKS["en_ewt"].file("dev").filename   # what resolve_treebank("en_ewt:dev") finds
'en_ewt-ud-dev.conllu'
>>> parse_name("UD_Korean-PUD:odd"), parse_name("my.conllu")
(('UD_Korean-PUD', 'odd'), None)

Where a file comes from, first match wins:

1. ``$PROBING_TREEBANKS/<code>/<file>`` or ``$PROBING_TREEBANKS/<repository>/<file>``
   (a local copy or an unpacked UD release: offline use, CI);
2. the cache, ``$PROBING_CACHE/treebanks`` or ``~/.cache/probing/treebanks``,
   laid out as ``<cache>/<code>/<file>``;
3. a download of the pinned commit from
   ``https://raw.githubusercontent.com/UniversalDependencies/<repo>/<commit>/<file>``
   (``PROBING_UD_BASE_URL`` replaces the part before ``/<repo>``).

Every PUD treebank and the English dev/test treebanks are pinned here with their commit and sha256,
and a file with a pinned sha256 is checked wherever it comes from, a local copy included. Any other UD
treebank is looked up in the UniversalDependencies organisation on first use (probing.data.catalogue:
its repository, files and newest commit, recorded in the cache), and its files are trusted on first
download: the sha256 is recorded in ``<cache>/manifest.json`` with a warning on stderr, and later uses
must match that record.

The package, one concern a module: :mod:`~probing.data.datasets.pinned` (the pinned treebanks),
:mod:`~probing.data.datasets.names` (what reads as a treebank's name, its halves),
:mod:`~probing.data.datasets.local` (copies under ``$PROBING_TREEBANKS``), :mod:`~probing.data.datasets.cache`
(the cache, downloads and the trust-on-first-use manifest) and :mod:`~probing.data.datasets.resolution` (a name
to its file, in the order above, and where each split would come from).
"""
