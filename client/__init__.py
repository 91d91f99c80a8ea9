"""CellWar clients: the Python SDK (:mod:`client.sdk`), bots (:mod:`client.bots`),
``python -m client.play`` (two bots play a Life game), and the browser client in
``client/web/``. Nothing here imports the engine: clients speak only the public API.
"""
