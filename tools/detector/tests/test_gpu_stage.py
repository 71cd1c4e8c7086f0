"""tools/detector/gpu/stage.py: packing files into call-sized parts and the texture list's version check
(standard library only: run by scripts/test.sh with the system python)."""
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gpu"))
import stage  # noqa: E402


def files(*sizes):
    return [(Path(f"f{i}"), s) for i, s in enumerate(sizes)]


class Pack(unittest.TestCase):
    def test_fills_parts_in_order_and_kit_rides_in_the_last(self):
        parts = stage.pack(files(40, 40, 30, 50), kit_bytes=20, budget=100)
        self.assertEqual(parts, [[Path("f0"), Path("f1")], [Path("f2"), Path("f3")]])

    def test_kit_that_does_not_fit_the_last_part_gets_its_own(self):
        parts = stage.pack(files(60, 30), kit_bytes=20, budget=100)
        self.assertEqual(parts, [[Path("f0"), Path("f1")], []])

    def test_no_part_exceeds_the_budget(self):
        sizes = [7, 13, 29, 31, 5, 17, 23, 11, 19, 3] * 5
        parts = stage.pack(files(*sizes), kit_bytes=0, budget=50)
        size_of = dict(files(*sizes))
        self.assertTrue(all(sum(size_of[p] for p in part) <= 50 for part in parts))
        self.assertEqual([p for part in parts for p in part], [p for p, _ in files(*sizes)])

    def test_a_file_or_kit_larger_than_a_call_is_refused(self):
        with self.assertRaises(SystemExit) as e:
            stage.pack(files(10, 120), kit_bytes=0, budget=100)
        self.assertIn("f1", str(e.exception))
        with self.assertRaises(SystemExit):
            stage.pack(files(10), kit_bytes=101, budget=100)


class OnDisk(unittest.TestCase):
    def test_files_count_by_whole_disk_blocks(self):
        self.assertEqual([stage.on_disk(n) for n in (0, 1, 4096, 4097)], [0, 4096, 4096, 8192])
        # 2,000 label files of 40 bytes weigh 8 MB against a call's limit, not 80 KB.
        self.assertEqual(sum(stage.on_disk(40) for _ in range(2000)), 2000 * 4096)


class TextureNames(unittest.TestCase):
    def test_list_of_another_generator_version_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "textures.txt"
            p.write_text("# vistawise-detector-data/2\n1.12/blocks/stone.png\n")
            with self.assertRaises(SystemExit) as e:
                stage.texture_names(p, "vistawise-detector-data/3")
            self.assertIn("record_textures.py", str(e.exception))
            p.write_text("# vistawise-detector-data/3\n1.12/blocks/stone.png\n\n")
            self.assertEqual(stage.texture_names(p, "vistawise-detector-data/3"), ["1.12/blocks/stone.png"])

    def test_shipped_list_matches_the_generator(self):
        src = (Path(__file__).resolve().parents[1] / "build_dataset.py").read_text()
        version = src.split('GENERATOR_VERSION = "', 1)[1].split('"', 1)[0]
        names = stage.texture_names(Path(stage.HERE) / "textures.txt", version)
        self.assertGreater(len(names), 1000)


if __name__ == "__main__":
    unittest.main()
