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
    norm = centres.clamp(min=1.0)
    heat = sum(
        functional.binary_cross_entropy_with_logits(
            student[:, k], torch.sigmoid(teacher[:, k]), reduction="sum")
        - functional.binary_cross_entropy_with_logits(
            teacher[:, k], torch.sigmoid(teacher[:, k]), reduction="sum")
        for k in HEAT_MAPS) / norm
    where = torch.sigmoid(teacher[:, CUBE]) + torch.sigmoid(teacher[:, OUTSIDE])
    where = where.clamp(max=1.0)
    target = functional.softmax(teacher[:, COLOUR] / temperature, dim=1)
    kl = (target * (functional.log_softmax(teacher[:, COLOUR] / temperature, dim=1)
                    - functional.log_softmax(student[:, COLOUR] / temperature, dim=1))).sum(1)
    colour = (kl * where).sum() / where.sum().clamp(min=1.0) * temperature ** 2
    return heat + colour
