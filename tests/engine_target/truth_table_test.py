#!/usr/bin/env python3
"""The truth table's search (truth_table.py) finds a target's own first failing batch: earlier than
the formulas', later, or none, with a stand-in target whose failing batches are given."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth_table as tt  # noqa: E402


def target(fails):
    """A stand-in target: group 0 fails exactly at the batches fails(n) says; counts what it ran."""
    ran = []

    def run(ns, tag):
        ran.extend(ns)
        return {n: ({0: [True, ["guard_corrupted"]]} if fails(n) else {}) for n in ns}
    return run, ran


class SearchTest(unittest.TestCase):
    def first(self, fails, formula_first, cap=256):
        run, ran = target(fails)
        evald, _ = tt.search(run, [0], cap, formula_first)
        self.assertEqual(len(ran), len(set(ran)), "no batch runs twice")
        return tt.first_failing(evald, 0), evald

    def test_agreeing_target_runs_the_sample_and_the_formulas_edge(self):
        first, evald = self.first(lambda n: 13 <= n <= 16, {13})
        self.assertEqual(first, 13)
        self.assertEqual(sorted(evald), [1, 2, 4, 8, 12, 13, 16, 32, 64, 128, 256])

    def test_earlier_failure_is_located_exactly(self):
        first, _ = self.first(lambda n: n >= 5, {13})
        self.assertEqual(first, 5)  # 4 clean, 8 fails: bisected to 5

    def test_later_failure_is_located_exactly(self):
        first, _ = self.first(lambda n: n >= 40, {13})
        self.assertEqual(first, 40)

    def test_no_failure_where_the_formulas_fail(self):
        first, evald = self.first(lambda n: False, {13})
        self.assertIsNone(first)
        self.assertIn(13, evald)

    def test_failure_where_the_formulas_see_none(self):
        first, _ = self.first(lambda n: n >= 200, set())
        self.assertEqual(first, 200)

    def test_cap_bounds_the_sample(self):
        first, evald = self.first(lambda n: n >= 100, {100}, cap=64)
        self.assertIsNone(first)
        self.assertEqual(max(evald), 64)

    def test_sample_max_stops_the_powers_not_the_formulas_edge(self):
        run, ran = target(lambda n: n >= 97)
        evald, _ = tt.search(run, [0], 256, {97}, sample_max=64)
        self.assertEqual(sorted(evald), [1, 2, 4, 8, 16, 32, 64, 96, 97])
        self.assertEqual(tt.first_failing(evald, 0), 97)

    def test_differing_batches_are_reported(self):
        model = {n: ({0: [True, []]} if n >= 13 else {}) for n in range(1, 257)}
        _, evald = self.first(lambda n: n >= 5, {13})
        s = tt.summarise(evald, [0], model)["0"]
        self.assertEqual(s["first"], 5)
        self.assertEqual(s["differ"][0], 5)
        self.assertTrue(all(5 <= n < 13 for n in s["differ"]))


if __name__ == "__main__":
    unittest.main()
