# Hack: a split tile's fixup is serial on one SM: it reads the tile's partials at one SM's share of the L2 read ceiling.
import dataclasses, os
import gpulab.jobs.best as _b
_orig_est = _b.Selector._estimate
FIX_SCALE = float(os.environ.get("FIX_SCALE", "1"))
def _fix_est(self, v, params, shape, modelled, efficiency=None, card=None):
    est = _orig_est(self, v, params, shape, modelled, efficiency=efficiency, card=card)
    if est is None or not est.split or est.tiles <= 0:
        return est
    c = card or self.card
    if not c.l2_gbps:
        return est
    ws = est.traffic.workspace_bytes if est.traffic is not None else None
    if ws:
        per_tile = ws / est.tiles
    elif "BM" in params and "BN" in params:
        per_tile = est.blocks / est.tiles * params["BM"] * params["BN"] * 4
    else:
        return est
    fix = FIX_SCALE * per_tile / (c.l2_gbps * 1e9 / c.sms)
    return dataclasses.replace(est, workspace_s=est.workspace_s + fix)
_b.Selector._estimate = _fix_est
