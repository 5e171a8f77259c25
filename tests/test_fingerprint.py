"""A random init's fingerprint names its recipe (architecture and seed), not the folder it was read from nor the
transformers release that read it: a committed random-init result must stay usable as --result or --select-on
after either changes."""

from __future__ import annotations

import shutil

from probing.model.loading import load_model
from probing.testing import tiny_bert


def test_a_random_init_is_the_same_weights_from_another_folder_and_release(tmp_path, monkeypatch):
    import transformers

    here = load_model(tiny_bert(), random_init=True, seed=3)
    moved = shutil.copytree(tiny_bert(), tmp_path / "elsewhere")
    monkeypatch.setattr(transformers, "__version__", "99.0.0")  # what a config's to_dict() writes as its version
    there = load_model(str(moved), random_init=True, seed=3)
    assert there.fingerprint == here.fingerprint
    assert load_model(str(moved), random_init=True, seed=4).fingerprint != here.fingerprint
