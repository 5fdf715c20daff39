"""Selection: what the backend does with every operator of the declarations."""
