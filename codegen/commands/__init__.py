"""The commands (``generate``, ``init``, ``diff``, ``ops``), the command line that offers them, and
its options and usage errors."""
