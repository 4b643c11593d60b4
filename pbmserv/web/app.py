"""The site as an ASGI app: its routes (``routes.py``), its manners on every response
(``headers.py``) and its error pages (``errors.py``), over a read-only engine."""

from __future__ import annotations

from sqlalchemy import Engine
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware

from pbmserv.config import Settings
from pbmserv.resources import templates_dir
from pbmserv.web.database import read_engine, read_sessions
from pbmserv.web.errors import Handlers
from pbmserv.web.headers import Manners
from pbmserv.web.metrics import Measured, Metrics
from pbmserv.web.routes import routes
from pbmserv.web.site import Site


def make_app(settings: Settings, engine: Engine | None = None) -> Starlette:
    """The web view over ``settings.db_url`` (through :func:`read_engine`: it reads one
    snapshot a request and takes no write lock), or over ``engine`` as it is given."""
    site = Site(settings, read_sessions(engine or read_engine(settings.db_url)))
    handlers = Handlers(site)
    metrics = Metrics(site.sessions)  # /metrics (views/operator.py): each site its own
    app = Starlette(
        routes=routes(templates_dir() / "web" / "static"),
        middleware=[
            Middleware(Measured, metrics=metrics),  # outermost: every answer counted
            Middleware(Manners, error_page=handlers.page_for),
        ],
        exception_handlers={
            HTTPException: handlers.http_error,
            Exception: handlers.server_error,
        },
    )
    app.state.site = site
    app.state.metrics = metrics
    return app
