"""The results-file metrics that every limit of an occupancy state shares (the mean-field
ODE's fixed point in :mod:`.ode`, the cavity fixed point in :mod:`.cavity`): one place for
the relations between them (docs/model.md, "Metrics")."""

from __future__ import annotations

import numpy as np


def occupancy_metrics(*, tail, mean_queue, utilization, share, p_wait, p_block, throughput, mean_sojourn, mu):
    """The dict of ``tail`` (J, K), ``mean_queue``, ``utilization``, ``admitted_share`` (J,),
    ``p_wait``, ``p_block``, ``p_wait_or_block`` (their sum), ``throughput``, ``mean_sojourn``
    and ``mean_wait`` (``mean_sojourn`` minus the mean service time ``sum_j share_j / mu_j``,
    share the admitted arrivals' split over the pools, mu (J,) the service rates)."""
    return {
        "tail": tail,
        "mean_queue": mean_queue,
        "utilization": utilization,
        "admitted_share": share,
        "p_wait": p_wait,
        "p_block": p_block,
        "p_wait_or_block": p_wait + p_block,
        "throughput": throughput,
        "mean_sojourn": mean_sojourn,
        "mean_wait": mean_sojourn - float(np.sum(share / mu)),
    }
