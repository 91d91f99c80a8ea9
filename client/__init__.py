"""CellWar clients: the Python SDK (:mod:`client.sdk`), bots (:mod:`client.bots`),
``python -m client.play`` (two bots play a Life game), and the browser client in
``client/web/``. Clients speak only the public API; the one exception is the in-process
backend of the AI environments (:mod:`client.rl`), which runs the engine library.
"""
