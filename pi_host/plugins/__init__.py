"""The plugin machinery: every hook declared with its return rule (``hookspecs``), ordered and
isolated dispatch (``dispatch``), discovery and import in load order (``loading``), what
registration hooks return (``registrations``) and the one path that decides which plugins load
for a directory (``selection``)."""
