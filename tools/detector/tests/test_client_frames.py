"""Labelled Minecraft-client frames in the detector data: build_dataset.py's `client` source
(--client-dir SPLIT=DIR) and tools/detector/gpu/stage.py's shrinking of them for a GPU call.
Needs numpy and OpenCV (.work/pydeps, from scripts/fetch-minilm.sh)."""
import sys
import tempfile
import unittest
from pathlib import Path

import _pydeps  # noqa: F401  (numpy, onnx, onnxruntime or a clear error)
import cv2
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "gpu"))
import build_dataset  # noqa: E402
import stage  # noqa: E402
from data.classes import NAMES  # noqa: E402
from data.sources import ClientSource, Context  # noqa: E402


def annotate_dir(root: Path, names=NAMES, frames=("minecraft-web_000001", "minecraft-web_000002")) -> Path:
    """A folder as `vistawise annotate --auto minecraft-web -o ROOT` writes it (a 1280x720 frame each)."""
    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir()
    (root / "data.yaml").write_text(
        "path: .\ntrain: images\nval: images\nnc: %d\nnames:\n" % len(names)
        + "".join(f"  {i}: {n}\n" for i, n in enumerate(names))
    )
    for k, stem in enumerate(frames):
        im = np.full((720, 1280, 3), 200 - 40 * k, np.uint8)
        im[100:300, 200:260] = (30, 60, 90)  # a "trunk"
        cv2.imwrite(str(root / "images" / f"{stem}.jpg"), im)
        (root / "labels" / f"{stem}.txt").write_text("0 0.179688 0.277778 0.046875 0.277778\n" if k == 0 else "")
    cv2.imwrite(str(root / "images" / "unlabelled.jpg"), np.zeros((720, 1280, 3), np.uint8))
    return root


class ClientFrames(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def source(self, dirs):
        return ClientSource(Context(None, self.root, {}, {"client_dirs": dirs}))

    def test_frames_are_listed_in_their_split_only(self):
        d = annotate_dir(self.root / "w5105")
        items = self.source({"train": [str(d)], "val": []}).items("train")
        self.assertEqual([i.name for i in items],
                         ["client_w5105_minecraft-web_000001.jpg", "client_w5105_minecraft-web_000002.jpg"])
        self.assertEqual(Path(items[0].label).read_text().split()[0], "0")
        self.assertEqual(self.source({"train": [str(d)], "val": []}).items("val"), [])
        self.assertEqual(self.source({"train": [str(d)], "val": []}).items("test-synth"), [])

    def test_frames_labelled_in_other_classes_are_refused_naming_the_file(self):
        d = annotate_dir(self.root / "mt", names=["tree", "stone"])
        with self.assertRaises(SystemExit) as e:
            self.source({"train": [str(d)]}).items("train")
        self.assertIn(str(d / "data.yaml"), str(e.exception))

    def test_a_test_split_or_a_folder_without_labels_is_refused(self):
        d = annotate_dir(self.root / "w1")
        for bad in (f"test={d}", f"train={self.root}", "train="):
            with self.assertRaises(SystemExit) as e:
                build_dataset.main(["--out", str(self.root / "out"), "--sources", "client", "--client-dir", bad])
            self.assertEqual(e.exception.code, 2, bad)
        with self.assertRaises(SystemExit):
            build_dataset.main(["--out", str(self.root / "out"), "--sources", "real,client"])
        self.assertFalse((self.root / "out").exists(), "nothing is written before the arguments are checked")

    def test_stage_shrinks_frames_to_the_training_size_and_keeps_the_labels(self):
        src = annotate_dir(self.root / "w5105")
        dst = self.root / "staged"
        self.assertEqual(stage.shrink_client_frames(src, dst, 640), 2)
        im = cv2.imread(str(dst / "images" / "minecraft-web_000001.jpg"))
        self.assertEqual(im.shape[:2], (360, 640))
        # the "trunk" is still where its label says (labels are relative to the image)
        self.assertLess(im[100:140, 105:125].mean(), 80)
        for stem in ("minecraft-web_000001", "minecraft-web_000002"):
            self.assertEqual((dst / "labels" / f"{stem}.txt").read_bytes(),
                             (src / "labels" / f"{stem}.txt").read_bytes())
        self.assertFalse((dst / "images" / "unlabelled.jpg").exists())
        self.assertEqual((dst / "data.yaml").read_text(), (src / "data.yaml").read_text())


if __name__ == "__main__":
    unittest.main()
