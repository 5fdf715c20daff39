"""The model: frozen types every later step takes (declarations, the backend configuration, the
selection, the manifest, the outputs and their names). Types only: parsing is in ``parse``."""
