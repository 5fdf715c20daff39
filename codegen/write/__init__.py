"""From emitted text to files: the plan of changes, the merge into user-owned files, the
transaction that writes them, and the answer to "is the tree current?"."""
