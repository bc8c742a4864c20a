"""The recorded ncu numbers against fresh predictions: every counted quantity that the access model
got exactly right on the H200 (results/h200/fidelity.csv, written there by `gpulab fidelity`) must
still be exactly right under the current kernels and access models. A change to a kernel or a model
that breaks agreement with the card fails here, on a CPU, in CI; the fix is to correct the model or,
when the kernel really changed, to re-run `gpulab fidelity` on the card and commit the new CSV."""

from pathlib import Path

import pytest

from gpulab.jobs import fidelity
from gpulab.records import read_csv

RECORDED = Path(__file__).resolve().parent.parent / "results" / "h200" / fidelity.FILE_NAME


def _rows():
    if not RECORDED.exists():
        pytest.skip(f"{RECORDED.relative_to(RECORDED.parents[2])} is not committed yet: run `gpulab fidelity` "
                    "on the H200 and commit it")
    return read_csv(RECORDED)


def test_every_quantity_exact_on_the_card_is_still_predicted_exactly():
    failures, checked, skipped = fidelity.replay(_rows())
    assert not failures, f"{len(failures)} of {checked} recorded exact counts no longer predicted:\n" + "\n".join(failures)
    if checked == 0:
        pytest.skip("the recorded CSV holds no exact counted quantity yet")


def test_the_recorded_csv_is_well_formed():
    rows = _rows()
    columns = {"experiment", "variant", "params", "shape", "quantity", "predicted", "measured", "ratio", "exact",
               "verdict", "note"}
    assert columns <= set(rows[0]), sorted(columns - set(rows[0]))
    for r in rows:
        if r["quantity"] in fidelity.COUNTED and r["exact"] is True:
            assert r["predicted"] == r["measured"], r


def test_the_recorded_kernels_are_the_current_ones():
    """A kernel edited since the card measured it may no longer do what its access model says, and
    only the card can tell: measure it again (gpulab fidelity EXPERIMENT -v VARIANT on the GPU)."""
    changed = fidelity.changed_kernels(_rows())
    assert not changed, ("kernels changed since results/h200/fidelity.csv was measured; re-run `gpulab fidelity` "
                         "for them on the card and commit the CSV:\n" + "\n".join(changed))


def test_the_recorded_verdicts_are_those_of_the_current_models():
    """`gpulab fidelity --rejudge` would change nothing: the committed table's predictions and
    verdicts are what the current models say about its measurements."""
    rows = _rows()
    again, _ = fidelity.rejudge(rows)
    key = ("experiment", "variant", "params", "shape", "quantity", "predicted", "measured", "verdict")
    assert [tuple(r.get(k) for k in key) for r in again] == [tuple(r.get(k) for k in key) for r in rows]
