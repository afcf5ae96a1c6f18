"""Two exported models mixed weight by weight (``vision.train.mix``): the mix is the weighted
average of the two networks' weights, it loads and reads in ``cv2.dnn``, and two different
networks are refused with a clear message (needs the ``train`` extra)."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("torch")

from onnx import numpy_helper  # noqa: E402

from vision.detector import MODEL_DIR  # noqa: E402
from vision.train.mix import main, mix_models  # noqa: E402


def weights(model) -> dict[str, np.ndarray]:
    return {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}


def scaled(model, factor: float):
    """A copy of ``model`` with every float weight times ``factor``."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for weight in copy.graph.initializer:
        value = numpy_helper.to_array(weight)
        if np.issubdtype(value.dtype, np.floating):
            weight.CopyFrom(numpy_helper.from_array(value * np.float32(factor), weight.name))
    return copy


@pytest.fixture(scope="module")
def shipped():
    return onnx.load(MODEL_DIR / "model.onnx")


@pytest.mark.parametrize("share", [0.0, 0.25, 1.0])
def test_each_weight_is_the_weighted_average(shipped, share):
    mixed = weights(mix_models(shipped, scaled(shipped, 3.0), share))
    for name, value in weights(shipped).items():
        if np.issubdtype(value.dtype, np.floating):
            np.testing.assert_allclose(mixed[name], value * (1 + 2 * share), rtol=1e-6, atol=1e-7)
        else:
            np.testing.assert_array_equal(mixed[name], value)


def test_a_model_mixed_with_itself_reads_the_same_in_opencv(shipped, tmp_path):
    (tmp_path / "same.onnx").write_bytes(mix_models(shipped, shipped, 0.5).SerializeToString())
    x = np.random.default_rng(0).uniform(-0.5, 0.5, (1, 7, 288, 512)).astype(np.float32)
    reads = []
    for path in (MODEL_DIR / "model.onnx", tmp_path / "same.onnx"):
        net = cv2.dnn.readNetFromONNX(str(path))
        net.setInput(x)
        reads.append(np.asarray(net.forward()))
    np.testing.assert_allclose(reads[1], reads[0], atol=1e-5)


def test_different_networks_are_refused(shipped):
    other = onnx.ModelProto()
    other.CopyFrom(shipped)
    del other.graph.node[-1]
    with pytest.raises(ValueError, match="not the same network"):
        mix_models(shipped, other, 0.5)


def test_the_command_writes_a_model_folder(shipped, tmp_path, capsys):
    onnx.save(scaled(shipped, 0.5), tmp_path / "half.onnx")
    assert main([str(MODEL_DIR), str(tmp_path / "half.onnx"), "--out", str(tmp_path / "mix")]) == 0
    written = onnx.load(tmp_path / "mix" / "model.onnx")
    name, value = next((n, v) for n, v in weights(shipped).items() if v.dtype == np.float32)
    np.testing.assert_allclose(weights(written)[name], value * 0.75, rtol=1e-6, atol=1e-7)
    decoder = json.loads((tmp_path / "mix" / "model.json").read_text())
    assert decoder == json.loads((MODEL_DIR / "model.json").read_text())
    cv2.dnn.readNetFromONNX(str(tmp_path / "mix" / "model.onnx"))
    assert "wrote" in capsys.readouterr().out


def test_what_it_cannot_mix_is_a_clear_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        main([str(MODEL_DIR), str(tmp_path / "nothing"), "--out", str(tmp_path / "mix")])
    assert stop.value.code == 2
    assert "no ONNX file" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([str(MODEL_DIR), str(MODEL_DIR), "--share", "1.5", "--out", str(tmp_path / "m")])
    assert "between 0 and 1" in capsys.readouterr().err
    assert not (tmp_path / "mix").exists()
