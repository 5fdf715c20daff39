"""Reading the inputs into the model: the declarations header, the backend YAML (custom ops and
classes included), the manifest, the installed torch, and the user's C++ kernel files."""
