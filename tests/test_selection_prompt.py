"""The selection prompt (paper Fig. 5; the released code's "past revisions"): besides totals
per strategy and per form, the attempts themselves (every one in the paper profile, two per
strategy in the released one), the recent evaluation results and the material the next
candidates can draw on."""

from __future__ import annotations

import re

from stratune_core.feedback.execution import FailureCase, Feedback
from stratune_core.operators.forms import OfferedExample
from stratune_core.operators.refinement import Refinement
from stratune_core.prompts.budget import estimate_tokens
from stratune_core.prompts.history import recent_cases
from stratune_core.prompts.templates import selection_prompt
from stratune_core.records.enums import Form, Reason, Strategy, Verdict
from stratune_core.state.history import History, HistoryEntry, OperatorChoice
from tests.support.docs import page


def _entry(r: int, s: Strategy, verdict: Verdict, **kw) -> HistoryEntry:
    return HistoryEntry(round=r, strategy=s, form=kw.pop("form", Form.F1), candidate_id=f"c{r}",
                        verdict=verdict, theme=kw.pop("theme", f"theme {r}"), **kw)


def history() -> History:
    h = History()
    whys = {0: "first round", 1: "refine the rules step by step", 2: "one more direct fix",
            3: "sample broadly", 4: "the failures share a cause"}
    for r, s in enumerate((Strategy.I1, Strategy.I2, Strategy.I1, Strategy.I3, Strategy.I1)):
        h = h.add_choice(OperatorChoice(round=r, strategy=s, form=Form.F1, why=whys[r]))
    for e in (
        _entry(0, Strategy.I1, Verdict.ACCEPTED, screen_gain=0.083, screen_wins=4,
               screen_losses=1, regressions=1, improvements=4, val_gain=0.05, held=True),
        _entry(1, Strategy.I2, Verdict.SAVED, form=Form.F3, screen_gain=0.004, screen_wins=2,
               screen_losses=2, regressions=1, improvements=1),
        _entry(2, Strategy.I1, Verdict.REJECTED_VALIDATION, form=Form.F4, screen_gain=0.06,
               screen_wins=5, screen_losses=2, regressions=2, improvements=5, val_gain=-0.01,
               held=False, reasons=(Reason.GAIN_BELOW_THRESHOLD,)),
        _entry(3, Strategy.I3, Verdict.INVALID, form=Form.F2, theme="",
               reasons=(Reason.UNGROUNDED_EXAMPLE,)),
        _entry(4, Strategy.I1, Verdict.REJECTED_SCREENING, screen_gain=-0.03, screen_wins=1,
               screen_losses=3, regressions=3, improvements=1,
               reasons=(Reason.MORE_LOSSES_THAN_WINS, Reason.LOSSES_AMONG_CHANGES)),
    ):
        h = h.add_entry(e)
    return h


def feedback() -> Feedback:
    failures = [FailureCase(sample_id=f"t{i}", input=f"Document:\nINVOICE {i}\nQuestion: total?",
                            output="The total is 12.", expected="65.31",
                            summary=f'answered "12", expected "65.31" (anls 0.00) #{i}', score=0.0)
                for i in range(6)]
    examples = [OfferedExample(sample_id="e1", line="[e1] Total? -> 3.50")]
    return Feedback(skill_id="s", batch_ids=[f.sample_id for f in failures] + ["ok"],
                    failures=failures, n_solved=1, mean_score=1 / 7, examples=examples)


def prompt(**kw) -> str:
    args = dict(feedback=feedback(), history=history(), refinement=Refinement(),
                intermediate_text=None, strategies=list(Strategy), forms=list(Form),
                checkable=4, budget=30_000)
    return selection_prompt(**{**args, **kw})


def test_recent_cases_are_the_latest_success_and_failure_of_each_strategy():
    cases = recent_cases(history())
    assert [(e.round, e.strategy) for e in cases] == [
        (0, Strategy.I1), (1, Strategy.I2), (3, Strategy.I3), (4, Strategy.I1)]


def test_released_rows_have_form_decision_gains_and_counts():
    text = prompt(past_revisions=True)
    attempts = text.split("Recent attempts")[1].split("## Form history")[0]
    rows = re.findall(r"^- round .*$", attempts, re.M)
    assert len(rows) == 4
    assert rows[0] == ("- round 1 I1+F1 “theme 0”: accepted; screening gain +0.083 (W/L 4/1, "
                       "D/U 1/4); validation gain +0.050 (held)")
    assert rows[1].startswith("- round 2 I2+F3 “theme 1”: saved for final selection")
    assert rows[2] == "- round 4 I3+F2: invalid before evaluation (ungrounded_example)"
    assert rows[3].startswith("- round 5 I1+F1 “theme 4”: rejected in screening "
                              "(more_losses_than_wins, losses_among_changes); screening gain "
                              "-0.030 (W/L 1/3, D/U 3/1)")
    # The totals stay, per strategy and per form.
    assert "- I1: 3 candidates, 1 accepted, 0 saved, 0 invalid" in text
    assert "- F4: 1 candidate, 0 accepted" in text and "held in validation 0/1" in text
    assert "Forms chosen while writing" not in text


def _rows(block: str) -> list[str]:
    return re.findall(r"^- (?:F\d: )?round .*$", block, re.M)


def test_the_paper_lists_every_attempt_newest_first():
    text = prompt()
    block = text.split("Every attempt, newest first:")[1].split("## Form history")[0]
    rows = _rows(block)
    assert [r.split(" ")[2] for r in rows] == ["5", "4", "3", "2", "1"]
    assert rows[4] == ("- round 1 I1+F1 “theme 0”: accepted; screening gain +0.083 (W/L 4/1, "
                       "D/U 1/4); validation gain +0.050 (held)")
    assert "left out" not in text


def test_no_row_repeats_the_selection_s_earlier_reason():
    """Fig. 5's history holds attempts, decisions, gains and regressions. A reason echoed into
    every later prompt is what a weak selector copies back as the reason for the same choice."""
    for text in (prompt(), prompt(past_revisions=True)):
        assert "chosen because" not in text
        for choice in history().choices:
            assert not choice.why or choice.why not in text


def _i1_writes_its_forms() -> History:
    """The same attempts, with I1's forms chosen while writing (its choice carries no form)."""
    h = history()
    choices = tuple(c if c.strategy is not Strategy.I1 else OperatorChoice(
        round=c.round, strategy=c.strategy, form=None, why=c.why) for c in h.choices)
    return History(entries=h.entries, choices=choices)


def test_the_paper_groups_attempts_by_the_form_the_selection_chose():
    text = prompt(history=_i1_writes_its_forms())
    forms = text.split("## Form history")[1].split("## Refinement progress")[0]
    chosen, writing = forms.split("Forms chosen while writing the candidate (I1):")
    assert "- F3: 1 candidate, 0 accepted, 1 saved" in chosen
    assert "- F2: 1 candidate, 0 accepted, 0 saved, 1 invalid" in chosen
    assert "- F1:" not in chosen.split("Attempts by")[0]  # I1's F1 attempts are not selections
    assert "- F1: 2 candidates, 1 accepted" in writing and "- F4: 1 candidate" in writing
    rows = _rows(writing)
    assert [r[:16] for r in rows] == ["- F2: round 4 I3", "- F3: round 2 I2"]
    assert all("chosen because" not in r for r in rows)


def test_a_short_budget_drops_the_oldest_attempts_and_counts_them():
    full = prompt()
    budget = estimate_tokens(full) - 60  # one or two rows too many
    text = prompt(budget=budget)
    block = text.split("Every attempt, newest first:")[1].split("## Form history")[0]
    by_form = text.split("Attempts by the form")[1].split("## Refinement")[0]
    dropped = 5 - len(_rows(by_form))
    assert dropped >= 1 and f"({dropped} attempts by form left out" in by_form
    assert len(_rows(block)) == 5  # the form rows go first
    tight = prompt(budget=2_200)
    block = tight.split("Every attempt, newest first:")[1].split("## Form history")[0]
    rows = _rows(block)
    kept = [r.split(" ")[2] for r in rows]
    assert 1 <= len(kept) < 5 and kept == ["5", "4", "3", "2"][:len(kept)]  # the newest stay
    assert block.strip().endswith(f"({5 - len(kept)} older attempts left out to fit the prompt budget)")


def test_the_feedback_block_shows_results_and_available_material():
    text = prompt()
    block = text.split("## Execution feedback")[1].split("## Strategy history")[0]
    assert "solved 1 of 7 samples" in block
    assert block.count('answered "12", expected "65.31"') == 6
    results = block.split("Recent evaluation results (newest last):\n")[1].split("Material")[0]
    assert [r.split(":")[0] for r in results.strip().splitlines()] == [
        "- round 3 I1+F4 “theme 2”", "- round 4 I3+F2", "- round 5 I1+F1 “theme 4”"]
    assert "chosen because" not in results
    assert "- solved samples that can be copied as worked examples (F2): 1" in block
    assert "- successful trajectories (solved samples of this batch): 1" in block
    assert "diagnoses each failure from its expected answer and the scorer's account" in block
    blind = prompt(blind=True).split("## Strategy history")[0]
    assert "4 of 6 can be verified by solving them blind" in blind
    assert "feedback preparation: off" in prompt(checkable=None)


def test_history_off_withholds_rows_and_results():
    text = prompt(history=None)
    assert "round 1" not in text and "Withheld in this run." in text
    assert "- withheld in this run" in text


def test_a_typical_selection_prompt_is_small():
    """A mid-run prompt with six failures and five attempts: every attempt twice in the paper
    profile (by strategy and by form), two per strategy in the released one."""
    paper, released = estimate_tokens(prompt()), estimate_tokens(prompt(past_revisions=True))
    assert 800 < released < paper < 3_000, (released, paper)


def _forty_attempts() -> History:
    """40 rounds cycling I1, I2, I3, each a rejected candidate with a theme and a reason."""
    h = History()
    for r in range(40):
        s = list(Strategy)[r % 3]
        h = h.add_choice(OperatorChoice(
            round=r, strategy=s, form=None if s is Strategy.I1 else Form.F3,
            why="the failures share a cause that a procedure step would fix in one place"))
        h = h.add_entry(_entry(r, s, Verdict.REJECTED_SCREENING,
                               form=Form.F1 if s is Strategy.I1 else Form.F3, screen_gain=-0.03,
                               screen_wins=1, screen_losses=3, regressions=3, improvements=1,
                               reasons=(Reason.MORE_LOSSES_THAN_WINS,),
                               theme="a short theme of the change"))
    return h


def test_forty_attempts_cost_what_the_docs_say():
    """docs/optimizer.md's figures for a prompt with 6 failures and 40 attempts."""
    said = re.search(r"attempts is ([\d,]+) tokens in the paper layout against ([\d,]+) in the "
                     r"released one", " ".join(page("optimizer.md").split()))
    assert said is not None
    paper = estimate_tokens(prompt(history=_forty_attempts(), budget=32_000))
    released = estimate_tokens(prompt(history=_forty_attempts(), budget=32_000,
                                      past_revisions=True))
    assert (f"{paper:,}", f"{released:,}") == said.groups()
