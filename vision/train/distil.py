"""Training on while keeping what the starting network knew: its own maps as soft targets.

Why: going on from the shipped model on the few set-ups the two cores can render in a session
(run 33: 46 set-ups and ``trays-rendered-train``) taught it those tables and made it forget
more of the 316 it had learned from, so fresh set-ups read worse. Learning without forgetting
(Li and Hoiem 2016; Hinton et al. 2015) keeps a frozen copy of the starting network and asks
the one in training to also read each augmented batch as that copy does: the copy's maps carry
what the earlier tables taught, the labels what the new ones add.

The heat maps are matched as Bernoulli distributions per cell (cross-entropy with the teacher's
probabilities, normalised like the focal loss by the labelled centres); the colour logits as
softmax distributions at ``temperature`` (scaled by its square, so that the gradient's size does
not depend on it), weighted by how sure the teacher is that a cube is there: elsewhere the
colour maps are never read. The sub-cell offsets are left to the labels.
"""

from __future__ import annotations

import torch
from torch.nn import functional

from vision.train.model import COLOUR, CORNER, CUBE, OUTSIDE

HEAT_MAPS = (CUBE, OUTSIDE, CORNER)


def distil_loss(student: torch.Tensor, teacher: torch.Tensor, centres: torch.Tensor,
                temperature: float = 2.0) -> torch.Tensor:
    """How far the student's maps are from the teacher's (both N x 12 x H x W logits); zero
    gradient where they agree. ``centres`` is how many labelled centres the batch holds."""
    teacher = teacher.detach().float()
    student = student.float()
    heat_maps = list(HEAT_MAPS)
    sure = torch.sigmoid(teacher[:, heat_maps])
    # cross-entropy less the teacher's own entropy: a Bernoulli KL, zero where they agree
    heat = (functional.binary_cross_entropy_with_logits(student[:, heat_maps], sure,
                                                        reduction="sum")
            - functional.binary_cross_entropy_with_logits(teacher[:, heat_maps], sure,
                                                          reduction="sum"))
    heat = heat / centres.clamp(min=1.0)
    where = (sure[:, 0] + sure[:, 1]).clamp(max=1.0)  # a cube there, in the tray or out
    kl = functional.kl_div(functional.log_softmax(student[:, COLOUR] / temperature, dim=1),
                           functional.log_softmax(teacher[:, COLOUR] / temperature, dim=1),
                           reduction="none", log_target=True).sum(1)
    colour = (kl * where).sum() / where.sum().clamp(min=1.0) * temperature ** 2
    return heat + colour
