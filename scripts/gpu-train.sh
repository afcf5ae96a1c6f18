#!/usr/bin/env bash
# One prepared training run for a GPU machine lent for a few minutes.
#
# Why a script: a lent machine starts bare, sees only this working tree (64 MiB with what is
# carried), reaches nothing outside, and is lent for minutes, all tries counted. Everything it
# needs is therefore packed here first, and the run is one command that trains, calibrates,
# compares with the shipped model on validation-only set-ups and leaves its files in $OUT.
#
#   scripts/gpu-train.sh pack TRAIN_DIR... -- VAL_DIR...    # here: copies into gpu-data/
#   scripts/gpu-train.sh run [MINUTES]                      # there (default 6 minutes)
#
# `pack` copies each labelled folder's labels.json and pictures (not the renderer's _tmp) into
# gpu-data/train/ and gpu-data/val/ (ignored by git; name it in the run's carry), pictures
# larger than the network's input shrunk to it and their labels scaled alike (training fits
# every picture to the input first: vision/train/shrink.py), and refuses
# more than 60 MiB, a folder without labels.json or two of one name on a side, keeping the last
# pack then. VAL_DIR folders are validation set-ups only: never trained on, used to
# choose (scripts/validate-models.py --whole). `run` goes on from the shipped model at its own
# width, 1.25 times CubeNet's base (one pass of cv2.dnn at 512 x 288 on one thread: 13 ms at
# the base width, 23 ms at 1.25, 32 ms at 1.5, which leaves no room in the 40 ms median a
# picture may take; a narrower model would be widened to 1.25 first), half the pictures
# mirrored, re-shot on the GPU, its pass in bfloat16, reading all four views; it writes
# $OUT/model (model.onnx, model.json), $OUT/w.pt, $OUT/train.log and $OUT/validate.txt.
# EXTRA adds options to the training (e.g. EXTRA="--channels 20,30,50,120,200", only the deep
# stages wider: then those widths instead of 1.25; each at least the shipped model's).
# PYTHON picks the interpreter (default python3: on the lent machines, the one with PyTorch
# and OpenCV; `pack` takes .venv/bin/python when there is one). A new model ships
# only if validate.txt says it beats the shipped one and `python -m vision.bench ... --model`,
# back on the development machine, says it reads within the 40 ms median.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=$(realpath -m "${GPU_DATA:-gpu-data}")  # GPU_DATA: another folder (the tests use one)
LIMIT_MB=60

pack() {
    # Built beside the old pack and swapped in only when whole and small enough, so a wrong
    # folder or too much data leaves the last good pack as it was.
    local to=train dir name seen=" " python=${PYTHON:-python3}
    # here, the project's own environment has OpenCV; a lent machine has no .venv
    if [ -z "${PYTHON:-}" ] && [ -x .venv/bin/python ]; then python=.venv/bin/python; fi
    if [ -e "$DATA" ] && [ ! -e "$DATA/.gpu-data" ]; then  # never empty a folder it did not make
        echo "$DATA exists and was not made by 'pack': choose another GPU_DATA" >&2
        exit 2
    fi
    mkdir -p "$(dirname "$DATA")"
    NEW=$(mktemp -d "$DATA.part.XXXXXX")
    trap 'rm -rf "$NEW"' EXIT
    mkdir -p "$NEW/train" "$NEW/val"
    touch "$NEW/.gpu-data"
    for dir in "$@"; do
        if [ "$dir" = "--" ]; then to="val"; continue; fi
        [ -f "$dir/labels.json" ] || { echo "no labels.json in $dir" >&2; exit 2; }
        name=$(basename "$dir")
        case "$seen" in *" $to/$name "*)
            echo "two $to folders named $name: each is packed under its own name" >&2; exit 2 ;;
        esac
        seen="$seen$to/$name "
        "$python" -m vision.train.shrink "$dir" "$NEW/$to/$name" >/dev/null
    done
    local mb
    mb=$(du -sm "$NEW" | cut -f1)
    if [ "$mb" -gt "$LIMIT_MB" ]; then
        echo "that pack is $mb MiB: more than the $LIMIT_MB MiB a lent machine's call can" \
            "carry (the last pack, if any, is kept)" >&2
        exit 2
    fi
    rm -rf "$DATA"
    mv "$NEW" "$DATA"
    trap - EXIT
    echo "$DATA: $mb MiB; $(find "$DATA/train" -name labels.json | wc -l) training and" \
        "$(find "$DATA/val" -name labels.json | wc -l) validation folders"
}

run() {
    local minutes=${1:-6}
    local python=${PYTHON:-python3}
    local out=${OUT:?set OUT to the folder the run writes into}
    [ -d "$DATA/train" ] || { echo "no $DATA/train: run 'pack' first and carry $DATA" >&2; exit 2; }
    export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
    local train=("$DATA"/train/*) val=("$DATA"/val/*)
    [ -e "${val[0]}" ] || val=()
    # the widths: 1.25 times the base (the shipped model's), unless EXTRA gives --channels or
    # --width
    local widths=(--width 1.25) shape="1.25 wide"
    case " ${TRAIN_ARGS[*]} " in
        *" --channels "* | *" --channels="* | *" --width "* | *" --width="*)
            widths=() shape="widths as EXTRA gives" ;;
    esac
    "$python" -m vision.train "${train[@]}" --init vision/model "${widths[@]}" --mirror 0.5 \
        --views plain turned mirrored flipped --minutes "$minutes" --batch 32 --lr 1e-3 \
        --precision bf16 --warmup 200 --out "$out/model" --weights "$out/w.pt" \
        --note "gpu-train.sh: $minutes min from the shipped model, $shape, half mirrored" \
        "${TRAIN_ARGS[@]}" 2>&1 | tee "$out/train.log"
    "$python" scripts/validate-models.py --data "${train[@]}" --whole "${val[@]}" \
        --models vision/model "$out/model" 2>&1 | tee "$out/validate.txt"
}

TRAIN_ARGS=()
if [ -n "${EXTRA:-}" ]; then read -r -a TRAIN_ARGS <<< "$EXTRA"; fi
case "${1:-}" in
    pack) shift; pack "$@" ;;
    run) shift; run "$@" ;;
    *) sed -n '/^set -euo/q;2,$p' "$0" >&2; exit 2 ;;  # the header above
esac
