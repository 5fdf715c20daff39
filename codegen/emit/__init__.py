"""Emitters: pure functions from the model to output files, one module per kind of output."""
