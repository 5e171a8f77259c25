"""The model options' vocabularies, without torch: the command line checks ``--dtype``, ``--stack`` and
``--device-map`` against these before anything imports torch (probing.model.loading maps them to torch's
objects).

>>> DTYPE_NAMES, STACKS, DEVICE_MAPS
(('float32', 'float16', 'bfloat16'), ('encoder', 'decoder'), ('auto',))
"""

DTYPE_NAMES = ("float32", "float16", "bfloat16")
"""The weights' precisions ``--dtype`` takes, each the name of a torch dtype."""

STACKS = ("encoder", "decoder")
"""Which self-attention of an encoder-decoder model is read (``--stack``)."""

DEVICE_MAPS = ("auto",)
"""How accelerate may spread one model over the visible devices in one process (from_pretrained's ``device_map``):
``auto`` fills the GPUs in order, then the CPU."""
