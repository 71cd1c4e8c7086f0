"""Record which minecraft-assets texture files a data build reads, for stage.py's texture subset.

The GPU machine cannot reach npm, and the whole texture tree of the generator's versions (25 MB
compressed) does not fit beside the real frames in one call, so only the files the generator opens
travel. Which files those are depends on the generator (GENERATOR_VERSION): run this after a change
that bumps it. It runs a full build (every texture a full build opens; a small one opens a fifth of
them) into a scratch folder with an audit hook on open(), then writes the sorted list.

    python tools/detector/gpu/record_textures.py --out tools/detector/gpu/textures.txt -- \\
        --out /tmp/texture-audit-data --seed 0 --workers 2 --sources real,icons,world --synthetic-test 0
(everything after -- goes to build_dataset.py; about 10 minutes on 2 cores)
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DETECTOR = HERE.parent
MARKER = "minecraft-assets/data/"


def main() -> int:
    argv = sys.argv[1:]
    build_args = argv[argv.index("--") + 1 :] if "--" in argv else []
    own = argv[: argv.index("--")] if "--" in argv else argv
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True, help="the list to write")
    args = ap.parse_args(own)

    log_dir = Path(tempfile.mkdtemp(prefix="texture-audit-"))

    # Worker processes inherit the hook (fork); each appends to its own file.
    def hook(event, hook_args):
        if event != "open" or not hook_args:
            return
        p = hook_args[0]
        if isinstance(p, (str, bytes, os.PathLike)):
            p = os.fsdecode(os.fspath(p))
            if MARKER in p:
                with open(log_dir / f"{os.getpid()}.txt", "a") as f:
                    f.write(p.split(MARKER, 1)[1] + "\n")

    sys.addaudithook(hook)
    sys.path.insert(0, str(DETECTOR))
    import build_dataset  # noqa: E402

    sys.argv = [str(DETECTOR / "build_dataset.py"), *build_args]
    try:
        runpy.run_path(str(DETECTOR / "build_dataset.py"), run_name="__main__")
    except SystemExit as e:
        if e.code not in (0, None):
            raise
    names = sorted({line.strip() for f in log_dir.glob("*.txt") for line in f.read_text().splitlines() if line.strip()})
    if not names:
        raise SystemExit("record_textures: the build opened no texture (did it run?)")
    args.out.write_text(f"# {build_dataset.GENERATOR_VERSION}\n" + "\n".join(names) + "\n")
    print(f"record_textures: {len(names)} files -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
