"""The bundled installer: Click databases, users, hooks and gc (stdlib only).

:mod:`.database` reads the layered databases, :mod:`.users` the registrations,
:mod:`.hooks` the system's hook files, :mod:`.unpack` writes a version tree,
:mod:`.lock` serialises writers, :mod:`.changes` makes the changes to
``current``, registrations and hook links that a killed writer's successor
finishes (recorded as :mod:`.intents`), and :mod:`.installer` ties them together.
Modules are imported on use, so the CLI starts fast.
"""
