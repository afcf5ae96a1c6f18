"""Two exported models' weights mixed into one (WiSE-FT: Wortsman et al. 2022).

Why: a run fine-tuned on new tables (random prints, dim light) reads those better and
forgets a little of the tables it knew; a weighted average of its weights and the weights it
started from often keeps most of both. The two ONNX files must be the same network (the same
graph and layer shapes, as any run that went on from the other with ``--init`` is); batch
norm is folded into their convolutions, so the mix is of the folded weights.

    python -m vision.train.mix vision/model RUN/model --share 0.5 --out MIX

writes ``MIX/model.onnx`` and a copy of the first model's ``model.json``. The decoder's
numbers belong to another network: fit them again as a run does before judging the mix,
``python -m vision.train DATA... --init MIX --steps 0 --views ... --out MIX-CAL``.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from vision.train.augment import share as share_arg
from vision.train.unfold import onnx_file


def mix_models(first: onnx.ModelProto, second: onnx.ModelProto, share: float) -> onnx.ModelProto:
    """``first`` with each float weight replaced by ``(1 - share) * first + share * second``."""
    if [(n.op_type, list(n.input)) for n in first.graph.node] != [
        (n.op_type, list(n.input)) for n in second.graph.node
    ]:
        raise ValueError("the two models are not the same network (their graphs differ)")
    theirs = {i.name: numpy_helper.to_array(i) for i in second.graph.initializer}
    mixed = onnx.ModelProto()
    mixed.CopyFrom(first)
    for weight in mixed.graph.initializer:
        mine = numpy_helper.to_array(weight)
        other = theirs.get(weight.name)
        if other is None or other.shape != mine.shape:
            raise ValueError(f"the two models' weight {weight.name} differs in name or shape")
        if np.issubdtype(mine.dtype, np.floating):
            blend = ((1.0 - share) * mine + share * other).astype(mine.dtype)
            weight.CopyFrom(numpy_helper.from_array(blend, weight.name))
        elif not np.array_equal(mine, other):
            raise ValueError(f"the two models' constant {weight.name} differs")
    return mixed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vision.train.mix", description=__doc__)
    parser.add_argument("first", type=Path, help="model folder or ONNX file (keeps 1 - share)")
    parser.add_argument("second", type=Path, help="model folder or ONNX file (gets share)")
    parser.add_argument("--share", type=share_arg, default=0.5)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    paths = [onnx_file(args.first), onnx_file(args.second)]
    for given, path in zip((args.first, args.second), paths, strict=True):
        if path is None:
            parser.error(f"{given}: no ONNX file, nor a model folder with model.onnx")
    try:
        mixed = mix_models(onnx.load(paths[0]), onnx.load(paths[1]), args.share)
    except ValueError as exc:
        parser.error(str(exc))
    args.out.mkdir(parents=True, exist_ok=True)
    onnx.save(mixed, args.out / "model.onnx")
    decoder = paths[0].parent / "model.json"
    if decoder.is_file():
        shutil.copyfile(decoder, args.out / "model.json")
    print(f"wrote {args.out / 'model.onnx'}: {1 - args.share:g} x {paths[0]} + "
          f"{args.share:g} x {paths[1]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
