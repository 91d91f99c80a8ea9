"""The CellWar gateway: FastAPI REST + WebSocket in front of the session service.

Wiring: :func:`gateway.app.create_app`; run with ``python -m gateway``.
"""
