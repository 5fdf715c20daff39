"""``scaffold-backend init``: a new backend project."""
