"""The commands (``generate``, ``init``, ``diff``, ``ops``) and the command line that offers them."""
