"""scaffold-backend: generate and maintain an out-of-tree PyTorch device backend."""

__version__ = "0.2.0"
