"""``pi batch tasks.jsonl --out DIR``: many pi-host sessions at once, on this machine (a bounded
pool of ``pi --mode json`` processes) or on a Ray cluster (``--executor ray``, the ``pi-host[ray]``
extra). One record per task lands in ``DIR/results.jsonl`` as tasks finish; ``--resume`` goes on
where a killed batch stopped. See docs/batch.md.

Importing this module is cheap: the command loads when it runs.
"""

from pi_host import hookimpl
from pi_host.plugins.registrations import Subcommand


def _run(argv):
    from pi_batch.cli import main

    return main(argv)


@hookimpl
def register_subcommands():
    return [Subcommand("batch", _run, "Run many tasks (JSONL) in parallel, locally or on Ray")]
