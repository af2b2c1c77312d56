"""The app (Release mode, driven by AppTest) and the command line spend one population's budget.

Before populations the app keyed its account by the uploaded bytes and the command line by the plan's
name: the audit spent 6.24 of 8 in the app plus 2 of 2 on the command line for one file. Here the command
line releases from a file, then the app is given a re-saved copy (reordered rows, CRLF line ends) and
finds the same population with what the command line spent, and its release adds to that budget."""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
from test_release_panel import _metric, _release, _session

from dpcore import ledger as L
from dpcore import pipeline
from dpcore.engines import execute, parse_source
from dpcore.plan import parse_plan


def test_the_command_line_then_the_app_spend_one_budget(tmp_path, monkeypatch):
    """... and one function charges them both: Account.charge, hooked, is called by dpcore.pipeline.release for
    the command line's release and for the app's: a check, a charge and a record written once for both."""
    url = f"sqlite:///{tmp_path}/ledger.db"
    monkeypatch.setenv(L.ENV_VAR, url)  # the app's default ledger is the command line's
    callers = []
    real_charge = L.Account.charge

    def hooked_charge(self, *args, **kwargs):
        caller = sys._getframe(1).f_code
        callers.append((caller.co_filename, caller.co_name, caller.co_firstlineno))
        return real_charge(self, *args, **kwargs)

    monkeypatch.setattr(L.Account, "charge", hooked_charge)
    gen = np.random.default_rng(11)
    frame = pd.DataFrame(
        {"income": np.round(gen.lognormal(10.6, 0.8, 1500), 2), "region": gen.choice(["north", "south", "west"], 1500)}
    )
    path = tmp_path / "survey.csv"
    path.write_text(frame.to_csv(index=False))
    db = L.init_ledger(url)
    db.register_population("households", 2.0, 1e-8)
    plan = parse_plan(
        textwrap.dedent("""\
        version = 1
        population = "households"
        dataset = "survey"
        income = "income"
        cap_epsilon = 2.0
        cell_sizes = "public"

        [[statistics]]
        kind = "mean"
        epsilon = 0.5
        lower = 0
        upper = 500000
        """)
    )
    execute.run_plan(plan, parse_source(str(path)), engine="duckdb", out_dir=tmp_path / "cli", ledger_url=url)

    resaved = frame.sample(frac=1.0, random_state=5).to_csv(index=False, lineterminator="\r\n").encode()
    at = _session(resaved, stats="gini", group=None)
    assert not at.error, [e.value for e in at.error]
    assert _metric(at, "Spent so far") == "ε = 0.5"  # what the command line spent on these people
    at.number_input(key="planner_rel_eps_gini").set_value(0.5).run()
    _release(at)
    assert not at.error, [e.value for e in at.error]
    assert any("Released" in s.value for s in at.success)
    assert L.open_ledger(url, create=False).population("households").spent_epsilon() == pytest.approx(1.0)
    assert len(L.open_ledger(url, create=False).accounts()) == 1  # one account for the app and the CLI
    assert len(callers) == 2 and callers[0] == callers[1], callers  # the command line's charge, then the app's
    assert callers[0][0] == pipeline.__file__ and callers[0][1] == "release"
