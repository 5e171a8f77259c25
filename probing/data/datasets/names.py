"""What reads as a treebank's name (``en_ewt:dev``, ``UD_German-GSD``, ``ko_pud:odd``) rather than a file path,
and the halves of a one-split treebank. Only the form is looked at: nothing is resolved or downloaded."""

from __future__ import annotations

import re
from pathlib import Path

HALVES = ("even", "odd")
"""The two halves of a one-split treebank: sentences with an even, or an odd, 0-based index in the file."""
WHOLE = "test"
"""What names a one-split treebank's whole file besides its bare name."""

# A UD code (language code, underscore, treebank: de_gsd, en_ewt) or a repository name (UD_German-GSD,
# UD_Ancient_Greek-PROIEL); a slash or a dot means the user meant a file.
_CODE = r"[a-z]{2,3}_[a-z0-9]+"
_REPOSITORY = r"UD_[A-Za-z_]+-[A-Za-z0-9]+"
_SPEC = re.compile(rf"^({_CODE}|{_REPOSITORY})(?::(\w+))?$")
UD_FILE = re.compile(rf"^({_CODE})-ud-(\w+)\.conllu$")



def parse_name(spec: str) -> tuple[str, str | None] | None:
    """``(name, split or None)`` when ``spec`` reads as a treebank name rather than a file path, else None.

    >>> parse_name("de_gsd:dev"), parse_name("ko_pud"), parse_name("data/x.conllu")
    (('de_gsd', 'dev'), ('ko_pud', None), None)
    """
    match = _SPEC.match(spec)
    return None if match is None else (match.group(1), match.group(2))


def is_treebank_name(spec: str) -> bool:
    """Whether ``spec`` names a UD treebank (``en_ewt:dev``, ``ko_pud:odd``) rather than an existing file.

    Only the form is looked at: nothing is resolved or downloaded.

    >>> is_treebank_name("en_ewt:dev"), is_treebank_name("UD_German-GSD"), is_treebank_name("my.conllu")
    (True, True, False)
    """
    return parse_name(spec) is not None and not Path(spec).expanduser().is_file()


def treebank_half(spec: str | None) -> str | None:
    """``"even"`` or ``"odd"`` when ``spec`` names a half of a one-split treebank, else None.

    >>> treebank_half("ko_pud:odd"), treebank_half("ko_pud"), treebank_half("en_ewt:dev")
    ('odd', None, None)
    """
    parsed = parse_name(spec) if spec and is_treebank_name(spec) else None
    return parsed[1] if parsed is not None and parsed[1] in HALVES else None
