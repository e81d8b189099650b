"""The Grafana dashboard in deploy/grafana reads only series the exposition serves: every
stepscope_* name in its queries is one metric_names.h spells (or a system metric the sampler
exposes), and its label filters use the exposition's labels."""
import json
import os
import re

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def exposed_names():
    header = open(os.path.join(REPO, "src/prometheus/metric_names.h")).read()
    names = set(re.findall(r'"(stepscope_[a-z_]+)"', header))
    # System metrics not spelled in the header: the sampler's names as SystemMetric maps them.
    names |= {"stepscope_network_rx_bytes_per_second", "stepscope_network_tx_bytes_per_second"}
    return names


def test_every_query_reads_an_exposed_series():
    dashboard = json.load(open(os.path.join(REPO, "deploy/grafana/stepscope-dashboard.json")))
    names = exposed_names()
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    assert exprs
    for expr in exprs:
        for name in re.findall(r"\bstepscope_[a-z_]+", expr):
            if name in ("stepscope_job",):  # the label
                continue
            assert name in names, f"{name} in {expr!r} is not exposed"
        assert 'stepscope_job=~"$job"' in expr and 'node=~"$node"' in expr
