"""The recorded ncu numbers against fresh predictions: every counted quantity that the access model
got exactly right on the H200 (results/h200/fidelity.csv, written there by `gpulab fidelity`) must
still be exactly right under the current kernels and access models. A change to a kernel or a model
that breaks agreement with the card fails here, on a CPU, in CI; the fix is to correct the model or,
when the kernel really changed, to re-run `gpulab fidelity` on the card and commit the new CSV."""

from pathlib import Path

import pytest

from gpulab.jobs import fidelity
from gpulab.records import read_csv, run_key

RECORDED = Path(__file__).resolve().parent.parent / "results" / "h200" / fidelity.FILE_NAME


def _rows():
    if not RECORDED.exists():
        pytest.skip(f"{RECORDED.relative_to(RECORDED.parents[2])} is not committed yet: run `gpulab fidelity` "
                    "on the H200 and commit it")
    return read_csv(RECORDED)


def check_replay(rows: list[dict]) -> int:
    """Every run of the table is replayed, and every count it recorded as exact is still predicted
    exactly; the number of counts checked. A run that cannot be replayed (its experiment, variant,
    params or shape is gone) fails: it would drop out of the check without a word."""
    failures, checked, skipped = fidelity.replay(rows)
    assert not skipped, (f"{len(skipped)} recorded runs no longer replay; measure them again under their new "
                         "names (gpulab fidelity on the card) or remove their rows:\n" + "\n".join(skipped))
    assert not failures, f"{len(failures)} of {checked} recorded exact counts no longer predicted:\n" + "\n".join(failures)
    exact = [r for r in rows if r.get("exact") is True and r.get("quantity") in fidelity.COUNTED]
    assert checked == len(exact), f"{len(exact) - checked} of {len(exact)} recorded exact counts were not checked"
    return checked


def renamed(rows: list[dict], experiment: str) -> list[dict]:
    """The rows with every variant of `experiment` renamed (as a variant renamed since the card ran)."""
    return [dict(r, variant=f"{r['variant']}_old") if r["experiment"] == experiment else r for r in rows]


def test_every_quantity_exact_on_the_card_is_still_predicted_exactly():
    if check_replay(_rows()) == 0:
        pytest.skip("the recorded CSV holds no exact counted quantity yet")


def test_a_recorded_run_that_no_longer_replays_fails_the_check():
    """With every sgemm variant renamed in the table, 40 runs dropped out of the replay and every
    test here still passed (issue 42)."""
    with pytest.raises(AssertionError, match="recorded runs no longer replay"):
        check_replay(renamed(_rows(), "sgemm"))
    with pytest.raises(AssertionError, match="were left as recorded"):
        check_rejudge(renamed(_rows(), "sgemm"))
    with pytest.raises(AssertionError, match="no longer name a current kernel"):
        check_kernels(renamed(_rows(), "sgemm"))


def test_the_recorded_csv_is_well_formed():
    rows = _rows()
    columns = {"experiment", "variant", "params", "shape", "quantity", "predicted", "measured", "ratio", "exact",
               "verdict", "note"}
    assert columns <= set(rows[0]), sorted(columns - set(rows[0]))
    for r in rows:
        if r["quantity"] in fidelity.COUNTED and r["exact"] is True:
            assert r["predicted"] == r["measured"], r


def check_kernels(rows: list[dict]) -> None:
    """Every recorded run names a current kernel, and its source is the one the card measured."""
    gone = sorted({f"{' '.join(run_key(r))}: {why}" for r in rows if (why := fidelity.spec_from_row(r)[1])})
    assert not gone, f"{len(gone)} recorded runs no longer name a current kernel:\n" + "\n".join(gone)
    changed = fidelity.changed_kernels(rows)
    assert not changed, ("kernels changed since results/h200/fidelity.csv was measured; re-run `gpulab fidelity` "
                         "for them on the card and commit the CSV:\n" + "\n".join(changed))


def test_the_recorded_kernels_are_the_current_ones():
    """A kernel edited since the card measured it may no longer do what its access model says, and
    only the card can tell: measure it again (gpulab fidelity EXPERIMENT -v VARIANT on the GPU)."""
    check_kernels(_rows())


def check_rejudge(rows: list[dict]) -> None:
    """Rejudging changes nothing, and leaves no run as recorded (each would escape the comparison)."""
    again, kept = fidelity.rejudge(rows)
    assert not kept, f"{len(kept)} runs were left as recorded by the rejudge:\n" + "\n".join(kept)
    key = ("experiment", "variant", "params", "shape", "quantity", "predicted", "measured", "verdict")
    assert [tuple(r.get(k) for k in key) for r in again] == [tuple(r.get(k) for k in key) for r in rows]


def test_the_recorded_verdicts_are_those_of_the_current_models():
    """`gpulab fidelity --rejudge` would change nothing: the committed table's predictions and
    verdicts are what the current models say about its measurements, for every run in it."""
    check_rejudge(_rows())
