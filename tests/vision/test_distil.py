"""``--distil``: training on from a network while matching its own maps (learning without
forgetting). The loss is zero where the two agree, pulls the student's maps to the teacher's,
and reads colours only where the teacher sees a cube; a run with it starts from ``--init``
and says so (needs the ``train`` extra: PyTorch)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from vision.detector import MODEL_DIR  # noqa: E402
from vision.train.__main__ import frozen_copy  # noqa: E402
from vision.train.__main__ import main as train_main  # noqa: E402
from vision.train.distil import distil_loss  # noqa: E402
from vision.train.model import COLOUR, CUBE, OUTSIDE, CubeNet  # noqa: E402

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "vision" / "trays-mini"
CENTRES = torch.tensor(4.0)


def maps(seed: int) -> torch.Tensor:
    return torch.randn(2, 12, 9, 16, generator=torch.Generator().manual_seed(seed)) * 3


def test_a_student_reading_as_its_teacher_loses_nothing():
    teacher = maps(0)
    assert abs(distil_loss(teacher.clone(), teacher, CENTRES).item()) < 1e-4
    assert distil_loss(maps(1), teacher, CENTRES).item() > 1.0


def test_the_loss_pulls_the_students_maps_to_the_teachers():
    teacher = maps(0)
    student = maps(1).requires_grad_(True)
    opt = torch.optim.Adam([student], lr=0.1)
    first = distil_loss(student, teacher, CENTRES).item()
    for _ in range(300):
        opt.zero_grad()
        distil_loss(student, teacher, CENTRES).backward()
        opt.step()
    assert distil_loss(student, teacher, CENTRES).item() < 0.05 * first
    cube = torch.sigmoid(student[:, CUBE]) - torch.sigmoid(teacher[:, CUBE])
    assert cube.abs().max().item() < 0.05


def test_colours_count_only_where_the_teacher_sees_a_cube():
    teacher = maps(0)
    teacher[:, CUBE] = -30.0
    teacher[:, OUTSIDE] = -30.0
    teacher[0, CUBE, 4, 8] = 30.0  # one cube, in the tray
    student = teacher.clone()
    student[:, COLOUR] += maps(2)[:, :7]  # other colours everywhere ...
    student[0, COLOUR, 4, 8] = teacher[0, COLOUR, 4, 8]  # ... but where the cube is
    assert distil_loss(student, teacher, CENTRES).item() < 1e-3
    student[0, COLOUR, 4, 8] = -teacher[0, COLOUR, 4, 8]
    assert distil_loss(student, teacher, CENTRES).item() > 0.1


def test_the_teacher_reads_as_the_starting_network_and_never_learns():
    student = CubeNet()
    teacher = frozen_copy(student)
    assert not teacher.training
    assert not any(p.requires_grad for p in teacher.parameters())
    with torch.no_grad():
        next(student.parameters()).add_(1.0)  # the student trains on; its teacher stays
    assert not torch.equal(next(student.parameters()), next(teacher.parameters()))


def test_distilling_without_a_teacher_is_refused_before_any_training(tmp_path):
    with pytest.raises(SystemExit, match="needs --init"):
        train_main([str(MINI), "--distil", "1", "--steps", "1", "--out", str(tmp_path / "m")])
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("bad", ["-1", "nan"])
def test_a_distil_weight_below_zero_is_refused(tmp_path, capsys, bad):
    with pytest.raises(SystemExit):
        train_main([str(MINI), "--distil", bad, "--init", str(MODEL_DIR), "--steps", "1",
                    "--out", str(tmp_path / "m")])
    assert "a weight of 0 (off) or more" in capsys.readouterr().err


@pytest.mark.slow
def test_a_run_distils_from_the_shipped_model(tmp_path, capsys):
    train_main([str(MINI), "--init", str(MODEL_DIR), "--distil", "1", "--steps", "3",
                "--batch", "2", "--input", "256x160", "--val-share", "0", "--out",
                str(tmp_path / "m"), "--log-every", "1", "--device", "cpu", "--precision",
                "bf16"])
    said = capsys.readouterr().out
    kept = [float(line.split(" distil ")[1].split()[0])
            for line in said.splitlines() if " distil " in line]
    assert len(kept) == 3 and all(math.isfinite(k) and k >= 0 for k in kept)
    assert (tmp_path / "m" / "model.onnx").is_file()
