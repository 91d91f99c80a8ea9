"""One APIRouter per resource: ``games`` (REST), ``stream`` (WebSocket), ``health``."""
