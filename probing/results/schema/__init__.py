"""What a result file holds (the module moved to probing.results.schema.specs; its parts follow in the next
commit)."""

from probing.results.schema.specs import *  # noqa: F403
from probing.results.schema.specs import _is_int  # noqa: F401
