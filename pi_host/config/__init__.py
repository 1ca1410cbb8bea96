"""Files on disk: where they are (``paths``), ``settings.json`` (``settings``, ``settings_schema``),
``trust.json`` (``trust``), ``auth.json`` (``credentials``), the model catalog and ``models.json``
(``models``), and the lock that pi and pi-host share when writing them (``locks``).

Below the plugin machinery: nothing here imports a plugin, the session or the loop.
"""
