"""The session's service layer: the command loop (the hub every write goes through), the game cache, views, and the ports (Protocols) the loop talks to."""
