"""Entry point for ``spark-submit`` (which runs a file, not a module)::

    zip -r dpcore.zip dpcore
    spark-submit --master yarn --py-files dpcore.zip dpcore/engines/submit.py \\
        release plan.toml --data hdfs:///warehouse/pseo/ --engine spark --out /secure/out --ledger postgresql://...

Without ``--master`` on the dpcore command line, the Spark engine uses the submission's master.
"""

import sys

from dpcore.cli import main

if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
