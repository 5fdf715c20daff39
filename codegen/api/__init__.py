"""C++ signatures and types of the selected operators, computed with torchgen's C++ API."""
