"""Kim et al.'s unknown-detection studies: the pooled ID ∪ near-OoD ∪ far-OoD set and its views."""

from __future__ import annotations

from collections.abc import Mapping

#: The pooled unknown-detection study: in-distribution test ∪ every near-OoD ∪ every far-OoD set.
UNKNOWN_STUDY = "unknown"
#: The in-distribution test set ∪ every near-OoD set (OoD detection against near-OoD).
NEAR_OOD_STUDY = "near_ood"
#: The in-distribution test set ∪ every far-OoD set (OoD detection against far-OoD).
FAR_OOD_STUDY = "far_ood"
#: Split kinds (``fdbench.data.types.StudyKind`` values) of the near- and far-OoD roles.
NEAR_OOD_KIND = "near_ood"
FAR_OOD_KIND = "far_ood"
#: OoD-detection metrics added to every unknown-detection study with new-class samples: the
#: in-distribution/OoD label instead of the failure label (``fdbench.metrics.auroc_out``,
#: ``fdbench.metrics.fpr_at_tpr_out`` at 95 % TPR).
OOD_METRICS = ("auroc_out", "fpr@95tpr_out")


def unknown_detection_pools(kinds: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
    """The pooled unknown-detection studies of splits with these kinds, and their members.

    ``kinds`` maps split names to their study kind (``SplitOutputs.kind``), in split order.
    Kim et al. (2023, Section 4; authors' ``test.py``, ``metrics_md.py``) judge unknown
    detection by one AURC on the in-distribution test set pooled with every near-OoD and every
    far-OoD set, each OoD sample an error. With splits of kind ``near_ood``/``far_ood``:
    :data:`UNKNOWN_STUDY` pools all of them, :data:`NEAR_OOD_STUDY` the near-OoD ones and
    :data:`FAR_OOD_STUDY` the far-OoD ones (the OoD-detection views of Kim's Table 5). Without
    such splits, every split whose kind starts with ``new_class`` (FD-Shifts' new-class
    studies, imported outputs) forms :data:`UNKNOWN_STUDY`, and there are no near/far views.
    The member splits hold only new-class samples; the evaluation set adds the
    in-distribution split (:func:`fdbench.protocol.build_evaluation_set`). A pool whose name
    is already a split name is left out. Empty when there is no OoD split.

    Why one pooled set: the paper's baseline AURC, 735.5 × 10⁻³ at 74.43 % accuracy (Table 5),
    is only reachable on the whole pool. With Table 2's test sizes (CIFAR-40 4000, CIFAR-60
    6000, LSUN-FIX 4000, SVHN 4000, DTD 5640, Gaussian 10 000) the pool holds N = 33 640
    samples of which 29 640 OoD + 0.2557 · 4000 = 1022.8 misclassified are errors: error rate
    r = 0.9115. Any CSF's AURC lies between the optimum r + (1 − r) ln(1 − r) = 0.6969 and the
    random CSF's r = 0.9115, and 0.7355 does (the ensemble's 0.6935 at 79.45 % likewise lies
    above its optimum 0.6826). In-distribution ∪ near-OoD alone gives r = 0.7023 < 0.7355, an
    AURC worse than random; the in-distribution set alone gives the misclassification AURC,
    75.25 × 10⁻³ in the same table. (The released ``test.py`` lists no Gaussian set; without it
    r = 0.8741 and the bounds 0.6131–0.8741 contain 0.7355 as well.)
    """
    if not isinstance(kinds, Mapping):
        raise TypeError(f"kinds must map split names to kinds; got {type(kinds).__name__}")
    near = tuple(s for s, k in kinds.items() if k == NEAR_OOD_KIND)
    far = tuple(s for s, k in kinds.items() if k == FAR_OOD_KIND)
    if near or far:
        both = tuple(s for s, k in kinds.items() if k in (NEAR_OOD_KIND, FAR_OOD_KIND))
        pools = {UNKNOWN_STUDY: both, NEAR_OOD_STUDY: near, FAR_OOD_STUDY: far}
    else:
        new = tuple(s for s, k in kinds.items() if str(k).startswith("new_class"))
        pools = {UNKNOWN_STUDY: new}
    return {name: members for name, members in pools.items() if members and name not in kinds}
