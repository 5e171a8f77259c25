"""probing.data.datasets against a real local HTTP server standing in for GitHub.

The served treebank is a copy, made at test time, of the shared en_ewt dev
file (never committed to the project), so the pinned sha256 really matches.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import http.server
import json
import os
import shutil
import socket
import threading
from pathlib import Path

import pytest
from conftest import _unavailable

from probing.data.datasets.cache import cache_dir, sha256_of
from probing.data.datasets.local import local_treebanks
from probing.data.datasets.pinned import KNOWN_TREEBANKS, Treebank, TreebankFile
from probing.data.datasets.resolution import fetch, lookup, resolve_treebank, whereabouts
from probing.errors import ProbingError

EWT = KNOWN_TREEBANKS["en_ewt"]
EWT_DEV = EWT.file("dev")
PUD = KNOWN_TREEBANKS["en_pud"]
PUD_TEST = PUD.file("test")
# A UD treebank that is not pinned: what the catalogue records for it once looked up.
GSD_ENTRY = {"code": "de_gsd", "repo": "UD_German-GSD", "commit": "b" * 40,
             "files": {"dev": "de_gsd-ud-dev.conllu", "test": "de_gsd-ud-test.conllu"}}
TINY = b"# sent_id = 1\n1\tHi\thi\tINTJ\t_\t_\t0\troot\t_\t_\n\n"


def _shared_treebanks() -> Path:
    env = os.environ.get("PROBING_TREEBANKS")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "treebanks"


# Resolved at import, before any test's monkeypatch removes PROBING_TREEBANKS.
SHARED = _shared_treebanks()
SHARED_EWT_DEV = SHARED / "en_ewt" / EWT_DEV.filename


def _shared(path: Path) -> Path:
    """A file of the shared treebank folder, or skip (fail under PROBING_REQUIRE_REAL_DATA) when it is absent."""
    if not path.is_file():
        _unavailable(f"the shared {path.relative_to(SHARED)}",
                     "set PROBING_TREEBANKS to the folder holding en_ewt/ and en_gum/")
    return path


class _Server:
    """A ThreadingHTTPServer over ``root`` that counts the requests it gets."""

    def __init__(self, root: Path):
        self.root = root
        self.requests: list[str] = []
        server = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's naming)
                server.requests.append(self.path)
                super().do_GET()

            def log_message(self, *args):  # keep pytest output clean
                pass

        handler = functools.partial(Handler, directory=str(root))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def put(self, tb, tb_file, data: bytes) -> str:
        path = self.root / tb.repo / tb.commit / tb_file.filename
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return f"{self.base_url}/{tb.repo}/{tb.commit}/{tb_file.filename}"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


@pytest.fixture
def env(tmp_path, monkeypatch):
    """A clean environment: cache in tmp_path, no local copy, no proxies, and the UD catalogue at a port
    nobody listens on (no test reaches the real network)."""
    for var in ("PROBING_TREEBANKS", "PROBING_UD_BASE_URL", "http_proxy", "HTTP_PROXY",
                "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PROBING_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PROBING_UD_API_URL", f"http://127.0.0.1:{_closed_port()}")
    return tmp_path


def _closed_port() -> int:
    with socket.socket() as sock:  # a port nobody listens on once closed
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def server(env, monkeypatch):
    srv = _Server(env / "served")
    srv.root.mkdir()
    monkeypatch.setenv("PROBING_UD_BASE_URL", srv.base_url)
    yield srv
    srv.close()


@pytest.fixture
def ewt_dev_bytes(env) -> bytes:
    # A copy into tmp_path, so nothing a test does can touch the shared file.
    copy = env / "ewt-dev-copy.conllu"
    shutil.copyfile(_shared(SHARED_EWT_DEV), copy)
    return copy.read_bytes()


def _cache_files() -> list[Path]:
    root = cache_dir()
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


@pytest.mark.real_data
def test_the_local_en_ewt_and_en_gum_files_are_the_pinned_ones():
    # Checked against the files themselves, so any folder of UD treebanks serves (no README.md beside them).
    for name in ("en_ewt", "en_gum"):
        for tb_file in KNOWN_TREEBANKS[name].files:
            assert sha256_of(_shared(SHARED / name / tb_file.filename)) == tb_file.sha256, tb_file.filename
    assert PUD.splits == ("test",) and len(PUD.commit) == 40 and len(PUD_TEST.sha256) == 64
    with pytest.raises(dataclasses.FrozenInstanceError):
        EWT.commit = "0" * 40


def test_cache_dir_follows_probing_cache(env):
    assert cache_dir() == env / "cache" / "treebanks"


@pytest.mark.real_data
def test_download_verifies_caches_and_is_not_repeated(server, ewt_dev_bytes):
    url = server.put(EWT, EWT_DEV, ewt_dev_bytes)

    path = resolve_treebank("en_ewt:dev")

    assert path == cache_dir() / "en_ewt" / EWT_DEV.filename
    assert path.read_bytes() == ewt_dev_bytes
    assert sha256_of(path) == EWT_DEV.sha256
    assert server.requests == [url.removeprefix(server.base_url)]
    assert _cache_files() == [path]  # no temp file left behind

    assert resolve_treebank("en_ewt:dev") == path
    assert resolve_treebank("en_ewt:dev", download=False) == path
    assert fetch("en_ewt", ["dev"]) == [path]
    assert len(server.requests) == 1


@pytest.mark.real_data
def test_corrupted_download_caches_nothing(server, ewt_dev_bytes):
    bad = ewt_dev_bytes.replace(b"\tobj\t", b"\tiobj\t", 1)
    assert bad != ewt_dev_bytes
    server.put(EWT, EWT_DEV, bad)

    with pytest.raises(ProbingError) as info:
        resolve_treebank("en_ewt:dev")

    msg = str(info.value)
    assert "sha256" in msg and EWT_DEV.filename in msg
    assert EWT_DEV.sha256 in msg
    assert hashlib.sha256(bad).hexdigest() in msg
    assert len(server.requests) == 1
    assert _cache_files() == []
    with pytest.raises(ProbingError, match="not in the cache"):
        resolve_treebank("en_ewt:dev", download=False)


@pytest.mark.real_data
def test_damaged_cache_file_is_downloaded_again(server, ewt_dev_bytes):
    server.put(EWT, EWT_DEV, ewt_dev_bytes)
    path = resolve_treebank("en_ewt:dev")
    path.write_bytes(b"truncated")

    assert resolve_treebank("en_ewt:dev").read_bytes() == ewt_dev_bytes
    assert len(server.requests) == 2


def test_http_404_names_the_url(server):
    with pytest.raises(ProbingError) as info:
        resolve_treebank("en_ewt:dev")

    msg = str(info.value)
    assert EWT.url(EWT_DEV) in msg and msg.startswith(server.base_url)
    assert "404" in msg and "PROBING_TREEBANKS" in msg
    assert len(server.requests) == 1
    assert _cache_files() == []


def test_unreachable_server_names_the_url(env, monkeypatch):
    with socket.socket() as sock:  # a port nobody listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("PROBING_UD_BASE_URL", f"http://127.0.0.1:{port}/")

    with pytest.raises(ProbingError) as info:
        fetch("en_ewt", ["test"])

    msg = str(info.value)
    assert f"http://127.0.0.1:{port}/UD_English-EWT/{EWT.commit}/en_ewt-ud-test.conllu" in msg
    assert "PROBING_TREEBANKS" in msg
    assert _cache_files() == []


@pytest.mark.real_data
def test_local_copy_is_used_without_any_request(server, monkeypatch):
    _shared(SHARED_EWT_DEV)
    monkeypatch.setenv("PROBING_TREEBANKS", str(SHARED))

    assert resolve_treebank("en_ewt:dev") == SHARED_EWT_DEV
    assert fetch("en_ewt", ["dev"]) == [SHARED_EWT_DEV]
    assert server.requests == []
    assert _cache_files() == []


@pytest.mark.real_data
def test_local_copy_with_wrong_checksum_is_an_error(server, env, ewt_dev_bytes, monkeypatch):
    local = env / "local"
    (local / "en_ewt").mkdir(parents=True)
    (local / "en_ewt" / EWT_DEV.filename).write_bytes(ewt_dev_bytes + b"\n")
    monkeypatch.setenv("PROBING_TREEBANKS", str(local))

    with pytest.raises(ProbingError, match="sha256 mismatch") as info:
        resolve_treebank("en_ewt:dev")
    assert str(local / "en_ewt" / EWT_DEV.filename) in str(info.value)
    assert server.requests == []


@pytest.mark.real_data
def test_local_copy_without_the_file_falls_back_to_download(server, env, ewt_dev_bytes, monkeypatch):
    (env / "empty").mkdir()  # a folder without the file (a folder that does not exist is refused)
    monkeypatch.setenv("PROBING_TREEBANKS", str(env / "empty"))
    server.put(EWT, EWT_DEV, ewt_dev_bytes)

    assert resolve_treebank("en_ewt:dev") == cache_dir() / "en_ewt" / EWT_DEV.filename
    assert len(server.requests) == 1


def _record_gsd() -> None:
    cache_dir().mkdir(parents=True, exist_ok=True)
    (cache_dir() / "catalogue.json").write_text(json.dumps({"de_gsd": GSD_ENTRY}))


def test_unverified_treebank_is_trusted_on_first_use(server, capsys):
    _record_gsd()
    gsd = lookup("de_gsd")
    server.put(gsd, gsd.file("dev"), TINY)

    path = resolve_treebank("de_gsd:dev")

    assert path.read_bytes() == TINY
    err = capsys.readouterr().err
    assert "unverified" in err and "warning" in err
    manifest = json.loads((cache_dir() / "manifest.json").read_text())
    entry = manifest["de_gsd/de_gsd-ud-dev.conllu"]
    assert entry["sha256"] == hashlib.sha256(TINY).hexdigest()
    assert entry["verified"] is False

    assert resolve_treebank("UD_German-GSD:dev") == path  # the repository name means the same file
    assert len(server.requests) == 1

    path.write_bytes(TINY + b"tampered")
    with pytest.raises(ProbingError, match="recorded on first download"):
        resolve_treebank("de_gsd:dev")


def _serve_catalogue(server) -> None:
    """The organisation's API as GitHub answers it, for two GSD treebanks (the query strings are ignored)."""
    api = server.root / "api"
    (api / "orgs" / "UniversalDependencies").mkdir(parents=True)
    (api / "orgs" / "UniversalDependencies" / "repos").write_text(json.dumps(
        [{"name": "UD_French-GSD"}, {"name": "UD_German-HDT"}, {"name": "UD_German-GSD"}, {"name": "docs"}]))
    for repo, sha, files in (("UD_French-GSD", "a" * 40, ["fr_gsd-ud-test.conllu", "README.md"]),
                             ("UD_German-GSD", "b" * 40, ["de_gsd-ud-dev.conllu", "de_gsd-ud-test.conllu",
                                                          "LICENSE.txt"])):
        folder = api / "repos" / "UniversalDependencies" / repo
        (folder / "commits").mkdir(parents=True)
        (folder / "commits" / "HEAD").write_text(json.dumps({"sha": sha}))
        (folder / "contents").write_text(json.dumps([{"name": name} for name in files]))


def test_a_ud_code_is_looked_up_in_the_organisation_once(server, monkeypatch, capsys):
    _serve_catalogue(server)
    monkeypatch.setenv("PROBING_UD_API_URL", f"{server.base_url}/api")
    gsd = Treebank("de_gsd", "UD_German-GSD", "b" * 40, ())
    url = server.put(gsd, TreebankFile("dev", "de_gsd-ud-dev.conllu", None), TINY)

    path = resolve_treebank("de_gsd:dev")

    assert path.read_bytes() == TINY and url.removeprefix(server.base_url) in server.requests
    recorded = json.loads((cache_dir() / "catalogue.json").read_text())["de_gsd"]
    assert recorded == {**GSD_ENTRY}
    asked = len(server.requests)
    monkeypatch.setenv("PROBING_UD_API_URL", f"http://127.0.0.1:{_closed_port()}")  # no network any more
    assert resolve_treebank("UD_German-GSD:dev") == path and resolve_treebank("de_gsd:dev") == path
    assert len(server.requests) == asked
    with pytest.raises(ProbingError, match="de_gsd has several splits; name one: de_gsd:dev or de_gsd:test"):
        resolve_treebank("de_gsd")
    capsys.readouterr()


def test_a_name_no_repository_holds_is_unknown(server, monkeypatch):
    _serve_catalogue(server)
    monkeypatch.setenv("PROBING_UD_API_URL", f"{server.base_url}/api")
    with pytest.raises(ProbingError, match="unknown treebank 'xx_gsd': no UniversalDependencies repository holds it"):
        resolve_treebank("xx_gsd:test")
    assert not (cache_dir() / "catalogue.json").exists()


def test_without_network_an_unpinned_name_fails_in_one_line(env):
    with pytest.raises(ProbingError) as info:
        resolve_treebank("de_gsd:dev")
    message = str(info.value)
    assert "cannot look up treebank 'de_gsd'" in message and "PROBING_TREEBANKS" in message
    assert "\n" not in message and _cache_files() == []


def test_an_unpinned_local_copy_needs_no_network(env, monkeypatch):
    local = env / "local"
    for folder in ("de_gsd", "UD_Korean-Kaist"):
        (local / folder).mkdir(parents=True)
    (local / "de_gsd" / "de_gsd-ud-dev.conllu").write_bytes(TINY)
    (local / "UD_Korean-Kaist" / "ko_kaist-ud-test.conllu").write_bytes(TINY)
    monkeypatch.setenv("PROBING_TREEBANKS", str(local))

    assert resolve_treebank("de_gsd:dev") == local / "de_gsd" / "de_gsd-ud-dev.conllu"
    assert resolve_treebank("UD_Korean-Kaist") == local / "UD_Korean-Kaist" / "ko_kaist-ud-test.conllu"
    assert {tb.name for tb in local_treebanks()} == {"de_gsd", "ko_kaist"}
    assert _cache_files() == []


def test_unknown_names_and_splits_list_the_known_ones(env):
    with pytest.raises(ProbingError) as info:
        resolve_treebank("en_foo:dev")
    for name in ("en_ewt", "en_gum", "en_pud", "ko_pud"):
        assert name in str(info.value)

    with pytest.raises(ProbingError, match="known splits: dev, test"):
        resolve_treebank("en_ewt:train")

    with pytest.raises(ProbingError, match="en_ewt:dev or en_ewt:test"):
        resolve_treebank("en_ewt")

    with pytest.raises(ProbingError, match="not a treebank name: 'nope'"):
        fetch("nope")


def test_plain_file_path_passes_through(env):
    path = env / "mine.conllu"
    path.write_text("# text = x\n1\tx\tx\tX\t_\t_\t0\troot\t_\t_\n\n", encoding="utf-8")

    assert resolve_treebank(str(path)) == path
    assert _cache_files() == []


def test_missing_path_is_reported(env):
    missing = env / "nope.conllu"
    with pytest.raises(ProbingError, match="treebank file not found: .*nope.conllu"):
        resolve_treebank(str(missing))
    with pytest.raises(ProbingError, match="treebank file not found: typo"):
        resolve_treebank("typo")


def test_data_list_says_where_every_split_comes_from_and_which_are_local(env, monkeypatch, capsys):
    """A copy under PROBING_TREEBANKS wins over the cache, the cache over a download; nothing is read or
    fetched to say so (the files here are not treebanks at all)."""
    from probing.cli import main

    local = env / "local"
    (local / "en_ewt").mkdir(parents=True)
    (local / "en_ewt" / EWT_DEV.filename).write_text("not read\n")
    (cache_dir() / "en_ewt").mkdir(parents=True)
    for tb_file in EWT.files:
        (cache_dir() / "en_ewt" / tb_file.filename).write_text("not read\n")
    monkeypatch.setenv("PROBING_TREEBANKS", str(local))
    found = {(entry.name, entry.split): entry for entry in whereabouts()}
    assert set(found) == {(name, split) for name, tb in KNOWN_TREEBANKS.items() for split in tb.splits}
    assert (found["en_ewt", "dev"].origin, found["en_ewt", "dev"].where) == (
        "PROBING_TREEBANKS", str(local / "en_ewt" / EWT_DEV.filename))
    assert found["en_ewt", "test"].origin == "cache" and found["en_ewt", "test"].local
    assert found["en_pud", "test"].origin == "download" and not found["en_pud", "test"].local
    assert found["en_pud", "test"].where == PUD.url(PUD_TEST)

    assert main(["data", "list"]) == 0
    out = capsys.readouterr().out
    assert f"PROBING_TREEBANKS: {local}" in out and f"cache: {cache_dir()}" in out
    rows = {tuple(line.split()[:2]): line.split()[2:] for line in out.splitlines()[4:]}
    assert rows["en_ewt", "dev"][:2] == ["yes", "PROBING_TREEBANKS"]
    assert rows["en_pud", "test"] == ["no", "download", PUD.url(PUD_TEST)]
    assert len(rows) == len(found)
