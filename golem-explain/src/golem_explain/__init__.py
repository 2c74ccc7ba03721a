"""Golem's explaining diagnostics: Grad-CAM (``golem run examine``), the network's layer table
(``golem run summary``) and the audit's chart (``golem run audit --chart``)."""
