"""RLE files of the stamp library, one per pattern id (read via pkgutil.get_data)."""
