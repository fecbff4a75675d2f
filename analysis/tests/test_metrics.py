"""One metric naming (tail[2][3], utilization[2], sojourn_quantiles[0.99]) and policy facts from the file."""

import math

import numpy as np
import pytest

import fakefile
import lbmc_analysis as la
from lbmc_analysis import metrics, policies


def test_parse_metric_syntax():
    assert la.parse_metric("tail[2][3]") == metrics.MetricRef("tail", (2, 3))
    assert la.parse_metric(" utilization[2] ").index == (2,)
    assert la.parse_metric("sojourn_quantiles[0.99]").index == (0.99,)
    assert str(la.parse_metric("sojourn_quantiles[0.99]")) == "sojourn_quantiles[0.99]"
    assert str(la.parse_metric("p_wait")) == "p_wait"
    for bad in ("tail[2", "2tail", "tail[x]", "", "p wait"):
        with pytest.raises(ValueError, match="metric"):
            la.parse_metric(bad)


def test_resolve_against_the_file(fake_extended):
    ds = la.load(fake_extended.path, grid=False)
    r = metrics.resolve(ds, "tail[2][3]")
    assert (r.pool, r.k) == (2, 3)
    np.testing.assert_array_equal(metrics.select(ds, "tail[2][3]").values, fake_extended.estimates["tail"]["mean"][:, 1, 2])
    np.testing.assert_array_equal(metrics.select(ds, "utilization[1]", "half_width").values,
                                  fake_extended.estimates["utilization"]["half_width"][:, 0])
    assert metrics.resolve(ds, "sojourn_quantiles[0.99]").level == 0.99
    with pytest.raises(ValueError, match=r"write 'utilization\[j\]' with 1 <= j <= 2"):
        metrics.resolve(ds, "utilization")
    with pytest.raises(ValueError, match=r"write 'tail\[j\]\[k\]' with 1 <= j <= 2, 1 <= k <= 10"):
        metrics.resolve(ds, "tail[3][1]")
    with pytest.raises(ValueError, match=r"write 'p_wait'"):
        metrics.resolve(ds, "p_wait[1]")
    with pytest.raises(ValueError, match="q in 0.5, 0.9, 0.99"):
        metrics.resolve(ds, "sojourn_quantiles[0.95]")
    with pytest.raises(KeyError, match="no metric 'nope'"):
        metrics.resolve(ds, "nope")


def test_labels_have_words_symbols_units(fake):
    ds = la.load(fake.path, grid=False)
    assert metrics.label(ds, "mean_sojourn") == "mean sojourn time, $E[T]$ [time]"
    assert metrics.label(ds, "utilization[2]") == "busy fraction of pool 2, $u_2$"
    assert "pool 1" in metrics.label(ds, "tail[1][3]") and "3 customers" in metrics.label(ds, "tail[1][3]")
    assert metrics.label(ds, "throughput").endswith("[1/time]")


def test_policy_facts_from_the_file(tmp_path):
    pts = [fakefile.point(10, 0.5, "random"), fakefile.point(10, 0.5, "pull")]
    pts.append(dict(fakefile.point(10, 0.5, "random"), policy="newpol(3)", policy_name="newpol", d=3))
    e = fakefile.write_results(tmp_path / "new.h5", pts)
    # no 'allowed' attribute: a new policy name is not an error
    assert not [p for p in la.check_file(e.path) if "policy_name" in p]
    attrs = {"allowed": ["random", "pull", "newpol"], "messages_per_arrival": ["0", "1", "3*d + 1"]}
    e2 = fakefile.write_results(tmp_path / "new2.h5", pts, policy_attrs=attrs)
    assert la.check_file(e2.path) == []
    ds = la.load(e2.path, grid=False)
    rules = policies.message_rules(ds["policy_name"].attrs)
    assert policies.expected_messages("newpol", d=3, rules=rules) == 10.0
    assert policies.expected_messages("jsq", d=2) == 4.0  # the docs' rules when the file has none
    assert math.isnan(policies.expected_messages("unknown", d=2))
    e3 = fakefile.write_results(tmp_path / "new3.h5", pts, policy_attrs={"allowed": ["random", "pull"]})
    assert any("newpol" in p and "allowed" in p for p in la.check_file(e3.path))
