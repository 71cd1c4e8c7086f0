"""tools/module_deps.py on small made-up crates: a pair, a cycle, and a clean layering."""

import contextlib
import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import module_deps  # noqa: E402


def check(root):
    """`module_deps.py --check` on `root`, its report kept from the test's output."""
    with contextlib.redirect_stdout(io.StringIO()):
        return module_deps.main(["--src", root, "--check"])


def crate(files):
    root = tempfile.mkdtemp()
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)
    return root


class ModuleDepsTest(unittest.TestCase):
    def test_two_modules_that_import_each_other_are_a_pair(self):
        root = crate(
            {
                "lib.rs": "pub mod a;\npub mod b;\n",
                "a/mod.rs": "pub mod x;\n",
                "a/x.rs": "use crate::b::{y::Thing, self};\n",
                "b/mod.rs": "pub mod y;\n",
                "b/y.rs": "// use crate::a::x; is only a comment\nfn f() { crate::a::x::g(); }\n",
            }
        )
        modules, edges = module_deps.edges_of(root)
        self.assertEqual(module_deps.top_level_pairs(edges), [("a", "b")])
        self.assertEqual(check(root), 1)

    def test_files_in_a_cycle_are_found_through_super(self):
        root = crate(
            {
                "lib.rs": "pub mod a;\n",
                "a/mod.rs": "pub mod x;\npub mod y;\npub mod z;\n",
                "a/x.rs": "use super::y::Y;\n",
                "a/y.rs": "use super::z::Z;\n",
                "a/z.rs": "use super::{x::X};\n",
            }
        )
        modules, edges = module_deps.edges_of(root)
        self.assertEqual(module_deps.cycles(modules, edges), [["a::x", "a::y", "a::z"]])
        self.assertEqual(module_deps.top_level_pairs(edges), [])

    def test_a_layered_crate_passes_and_config_may_pair(self):
        root = crate(
            {
                "lib.rs": "pub mod config;\npub mod a;\npub mod b;\n",
                "config/mod.rs": "pub mod validate;\npub use crate::a::settings::S;\n",
                "config/validate.rs": "pub fn check() {}\n",
                "a/mod.rs": "pub mod settings;\npub mod x;\n",
                "a/settings.rs": "use crate::config::validate::check;\n",
                "a/x.rs": "use super::settings::S;\nuse crate::b::Thing;\nuse crate::config::Config;\n",
                "b/mod.rs": "pub struct Thing;\n",
            }
        )
        self.assertEqual(check(root), 0)


if __name__ == "__main__":
    unittest.main()
