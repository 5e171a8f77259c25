"""Test-only CorefUD treebanks: the sample treebank's sentences with made-up coreference.

The sample treebank (data/sample.conllu) has no coreference, so mentions are
planted by a fixed rule that gives many antecedents of every type: every
NOUN, PROPN and PRON is the head of a mention whose span runs from the
leftmost word of its left ``det``/``amod``/``nummod``/``nmod:poss`` subtrees
to itself (so ``Maria 's brother`` holds the one-word mention ``Maria``); its
entity is one of a handful per document, picked from the lemma. Four
sentences make a document; each document states a ``# global.Entity``
header. Brackets are written as CorefUD writes them: closings (innermost
first), openings (outermost first), one-word mentions. The files are written
by the conllu library's serializer, not by the reader under test.
"""

from __future__ import annotations

from pathlib import Path

from conllu.models import Token, TokenList

from probing.data.treebank import Sentence, read_treebank
from probing.testing import sample_path, scratch_folder

SPAN_LABELS = ("det", "amod", "nummod", "nmod:poss")
HEAD_UPOS = {"NOUN": "object", "PROPN": "person", "PRON": "abstract"}
ENTITIES_PER_DOCUMENT = 4


def _subtree_start(sentence: Sentence, word: int) -> int:
    children = [child for child, head in enumerate(sentence.heads) if head == word]
    return min([word] + [_subtree_start(sentence, child) for child in children])


def planted_spans(sentence: Sentence) -> list[tuple[int, int, str, str]]:
    """(start, end, entity, etype) of the planted mentions of one sentence (0-based, end included)."""
    spans = []
    for word, upos in enumerate(sentence.upos):
        if upos not in HEAD_UPOS:
            continue
        left = [child for child, head in enumerate(sentence.heads)
                if head == word and child < word and sentence.labels[child] in SPAN_LABELS]
        start = min([word] + [_subtree_start(sentence, child) for child in left])
        entity = str(1 + sum(map(ord, sentence.words[word].lower())) % ENTITIES_PER_DOCUMENT)
        spans.append((start, word, entity, HEAD_UPOS[upos]))
    return spans


def brackets(spans: list[tuple[int, int, str, str]], word: int) -> str:
    """The ``Entity=`` value of one word (empty when no bracket falls on it)."""
    opening = sorted((s for s in spans if s[0] == word and s[1] > word), key=lambda s: -s[1])
    one_word = [s for s in spans if s[0] == s[1] == word]
    closing = sorted((s for s in spans if s[1] == word and s[0] < word), key=lambda s: -s[0])
    return ("".join(f"{entity})" for _, _, entity, _ in closing)
            + "".join(f"({entity}-{etype}-new" for _, _, entity, etype in opening)
            + "".join(f"({entity}-{etype}-new)" for _, _, entity, etype in one_word))


def coref_text(sentences: list[Sentence], per_document: int = 4, prefix: str = "doc") -> str:
    blocks = []
    for number, sentence in enumerate(sentences):
        metadata = {}
        if number % per_document == 0:
            metadata |= {"newdoc id": f"{prefix}{number // per_document}", "global.Entity": "GRP-etype-infstat"}
        metadata["sent_id"] = f"{prefix}-{number}"
        spans = planted_spans(sentence)
        tokens = []
        for word in range(len(sentence)):
            value = brackets(spans, word)
            tokens.append(Token(id=word + 1, form=sentence.words[word], lemma=None, upos=sentence.upos[word],
                                xpos=None, feats=sentence.feats[word], head=sentence.heads[word] + 1,
                                deprel=sentence.labels[word], deps=None, misc={"Entity": value} if value else None))
        blocks.append(TokenList(tokens, metadata).serialize())
    return "".join(blocks)


def coref_treebank_path(part: str = "all") -> Path:
    """The sample's sentences with planted coreference, written once per process: ``all`` (75
    sentences), ``dev`` (the first 36) or ``test`` (the other 39)."""
    path = scratch_folder() / f"coref-{part}.conllu"
    if not path.is_file():
        sentences = list(read_treebank(sample_path()))
        chosen = {"all": sentences, "dev": sentences[:36], "test": sentences[36:]}[part]
        path.write_text(coref_text(chosen, prefix=part), encoding="utf-8")
    return path
