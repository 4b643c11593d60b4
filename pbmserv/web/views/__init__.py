"""The site's views, one module a kind of page (each a template of ``templates/web/``)."""
