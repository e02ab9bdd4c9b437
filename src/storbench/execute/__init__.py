"""The execute stage: a plan's points run in order (runner.py) through the engines, each
recorded as it ends (runstore.py); steady-state rounds (rounds.py), preconditioning and
purges before the measurement (precondition.py, purge.py), failure drills beside the load
(drills.py), the load's hosts sampled (sampling.py), the Ceph cluster's health watched
(monitor.py), and the bookkeeping that overlaps the next engine's start (later.py)."""
