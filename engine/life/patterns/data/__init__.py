"""RLE files of the stamp library, one per pattern id (read via importlib.resources)."""
