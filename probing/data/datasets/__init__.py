"""Universal Dependencies treebanks by name (the module moved to probing.data.datasets.resolution; its parts
follow in the next commit)."""

from probing.data.datasets.resolution import *  # noqa: F403
from probing.data.datasets.resolution import _cached, _download, _lookup, hashlib, local_treebanks  # noqa: F401
