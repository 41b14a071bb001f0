"""docs/baselines.md's rows for TextGrad, Iter-CoT and SkillOpt say what the code does: each
claim below is read from the page and checked against the constant or behaviour it names."""

from __future__ import annotations

import re

from stratune_core.methods import textgrad_prompts
from stratune_core.methods.iter_cot_prompts import REVISE
from stratune_core.methods.skillopt import SLOW_DETAIL
from stratune_core.methods.skillopt_edits import edit_limit
from stratune_core.methods.skillopt_guidance import GUIDANCE_CLOSE, GUIDANCE_OPEN
from tests.support.docs import page


def _section(name: str) -> str:
    text = page("baselines.md")
    start = text.index(f"## {name} (")
    return re.sub(r"\s+", " ", text[start:text.index("\n## ", start + 1)])


def test_textgrad_rows_match_the_gradients_and_the_update_prompt():
    text = _section("TextGrad")
    assert "two gradient calls per sample" in text and "2 x 3 gradient calls a step" in text
    assert "the update prompt has no constraint" in text
    tail = textgrad_prompts.update_prompt("S", ["F"]).split("</feedback>", 1)[1].lower()
    assert "format" not in tail and "keep" not in tail
    assert "ends the run with the current skill" in text and "no_usable_candidates" in text


def test_iter_cot_rows_quote_the_revise_turn_and_the_pool_rule():
    text = _section("Iter-CoT")
    assert f"*{REVISE}*" in text
    assert "an answer right at once is never an exemplar" in text
    assert "with an empty pool the final skill is the initial skill" in text


def test_skillopt_rows_match_the_schedule_section_and_slow_update():
    text = _section("SkillOpt")
    said = re.search(r"over 4 steps (\d), (\d), (\d), (\d)", text)
    assert said and [int(x) for x in said.groups()] == [edit_limit(4, 2, k, 4)
                                                        for k in range(1, 5)]
    assert f"`{GUIDANCE_OPEN}` ... `{GUIDANCE_CLOSE}`" in text
    assert f'"{SLOW_DETAIL}"' in text
    assert "skipped when the epoch changed nothing" not in text
