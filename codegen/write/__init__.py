"""From emitted text to files: the plan of changes, the merge into user-owned files, the
transaction that writes them under the output directory's lock, and the answer to "is the tree
current?"."""
