"""Package data of the campaign: ``levels_generated.json`` (levels 8-103, one per line)."""
