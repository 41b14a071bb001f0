"""Every optimizer prompt is built to a token budget: the largest prompts the paper's
tasks can produce (12 failures with long outputs, 10 long worked examples, a skill at the
rewrite cap, a long history, a repair after a reply of the full max_tokens) stay within the
default budget and within budgets lowered to small context windows; a shortened prompt gives
up solved examples first, then older history rows, then failures beyond the first three, and
says so in its first line."""

from __future__ import annotations

import importlib.util
import re

import pytest

from llm_cache.records import CallKind, Message, Request, Role
from replay.models.prompt_fit import fit_to_context
from stratune_core.config.knobs import Config
from stratune_core.feedback.execution import FailureCase, Feedback
from stratune_core.operators.forms import OfferedExample
from stratune_core.operators.parsing import WHY_LIMIT
from stratune_core.operators.patches import rewrite_cap
from stratune_core.operators.refinement import Refinement
from stratune_core.prompts.budget import KEEP_FAILURES, estimate_tokens, turn_budget
from stratune_core.prompts.optimizer import repair_request
from stratune_core.prompts.prep_prompt import (
    NOTE_CHARS,
    PREPARATION_SYSTEM,
    Diagnosis,
    Preparation,
    PrepCase,
    SuccessNote,
    preparation_prompt,
)
from stratune_core.prompts.templates import (
    OPTIMIZER_SYSTEM,
    SELECTION_SYSTEM,
    generation_prompt,
    selection_prompt,
)
from stratune_core.records.enums import Form, Reason, Strategy, Verdict
from stratune_core.records.errors import ConfigError
from stratune_core.records.form_spec import FORM_SPECS
from stratune_core.round.prep import SOLVE_INPUT_CHARS
from stratune_core.state.history import History, HistoryEntry, OperatorChoice

# The longest learned skill the paper's authors published is 5,826 characters (DocVQA, Opus);
# one full rewrite of it may reach rewrite_cap of it.
SKILL_CHARS = rewrite_cap("x" * 5826)
# Text that is hard on the estimate: LaTeX, digits, ids and prose, as in LiveMath, DocVQA,
# Mind2Web and SpreadsheetBench inputs.
HARD = ("Let $f(x)=\\sum_{k=1}^{n} k^2 x^k$ on [0, 1]; Total 8,742.69 EUR (inv. INV-2025-6670), "
        "<button id=\"b-3f9a\">Search</button> ws['B12'].value = 3.14159; ")


# A skill is instruction prose, with the odd example and number.
PROSE = " ".join(s.description for s in FORM_SPECS) + " For example: Total 8,742.69 -> 8742.69. "


def text(n: int, seed: int = 0, base: str = HARD) -> str:
    base = base[seed % 7:] + base
    return (base * (n // len(base) + 1))[:n]


def skill(seed: int = 0) -> str:
    return text(SKILL_CHARS, seed, PROSE)


def largest_feedback() -> Feedback:
    failures = [
        FailureCase(sample_id=f"train-{i:04d}", input=text(600, i), output=text(400, i + 1),
                    expected=text(200, i + 2), summary=text(200, i + 3), score=0.0)
        for i in range(12)
    ]
    examples = [OfferedExample(sample_id=f"ex-{i:04d}", line=f"[ex-{i:04d}] {text(900, i)}")
                for i in range(10)]
    return Feedback(skill_id="s", batch_ids=[f.sample_id for f in failures] + ["ok-1", "ok-2"],
                    failures=failures, n_solved=2, mean_score=0.1, examples=examples)


def largest_preparation() -> Preparation:
    return Preparation(
        skill_id="s",
        diagnoses=[Diagnosis(sample_id=f"train-{i:04d}", wrong=text(NOTE_CHARS, i),
                             rule=text(NOTE_CHARS, i + 1), verified=i % 2 == 0)
                   for i in range(12)],
        successes=[SuccessNote(sample_id=f"ok-{i}", worked=text(NOTE_CHARS, i)) for i in range(3)],
    )


def largest_history() -> History:
    history = History()
    for r in range(40):
        strategy = list(Strategy)[r % 3]
        history = history.add_choice(OperatorChoice(round=r, strategy=strategy, form=Form.F3,
                                                    why=text(WHY_LIMIT, r)))
        for verdict in (Verdict.ACCEPTED, Verdict.REJECTED_VALIDATION, Verdict.INVALID):
            history = history.add_entry(HistoryEntry(
                round=r, strategy=strategy, form=Form.F3, candidate_id=f"c{r}", verdict=verdict,
                theme=text(120, r), reasons=(Reason.GAIN_BELOW_THRESHOLD, Reason.LOSSES_AMONG_CHANGES),
                screen_gain=0.0123, screen_wins=14, screen_losses=12, regressions=7,
                improvements=9, val_gain=-0.021, held=False))
    return history


def _generation(budget: int) -> str:
    return generation_prompt(
        skill_text=skill(), feedback=largest_feedback(), forms=tuple(Form),
        n_candidates=2, max_edits=6, budget=budget, preparation=largest_preparation())


def _selection(budget: int, history: History | None = None, *,
               past_revisions: bool = False) -> str:
    return selection_prompt(
        feedback=largest_feedback(), history=history or largest_history(),
        refinement=Refinement(started=True, steps=9, intermediate_id="i", reference_score=0.4),
        intermediate_text=skill(3), strategies=list(Strategy), forms=list(Form),
        checkable=12, budget=budget, past_revisions=past_revisions)


def _preparation(budget: int) -> str:
    failures = [PrepCase(sample_id=f"train-{i:04d}", input=text(600, i), output=text(400, i),
                         blind=text(SOLVE_INPUT_CHARS, i), expected=text(200, i),
                         problem=text(200, i + 1)) for i in range(12)]
    successes = [PrepCase(sample_id=f"ok-{i}", input=text(600, i), output=text(400, i),
                          solved=True) for i in range(3)]
    return preparation_prompt(format_lines=[text(200)], failures=failures, successes=successes,
                              budget=budget, keep_failures=KEEP_FAILURES).text


def _request(system: str, prompt: str) -> Request:
    return Request(role=Role.OPTIMIZER, model="o", system=system, messages=(Message.user(prompt),),
                   max_tokens=16384, kind=CallKind.CANDIDATE_GENERATION)


def _tokens(request: Request) -> int:
    return estimate_tokens(request.system) + sum(estimate_tokens(m.text()) for m in request.messages)


# The default, and what the shell leaves for prompts in 32k, 8k and 4k windows (the demo
# trace's optimizer: n_ctx 4096, 700 output tokens).
BUDGETS = [
    Config().prompt_tokens,
    fit_to_context(Config(), 32_768).prompt_tokens,
    fit_to_context(Config(), 8_192).prompt_tokens,
    fit_to_context(Config(optimizer_max_tokens=700), 4_096).prompt_tokens,
]


@pytest.mark.parametrize("total", BUDGETS)
def test_the_largest_prompts_fit_the_budget(total):
    requests = [
        _request(OPTIMIZER_SYSTEM, _generation(turn_budget(total, OPTIMIZER_SYSTEM))),
        _request(SELECTION_SYSTEM, _selection(turn_budget(total, SELECTION_SYSTEM))),
        _request(PREPARATION_SYSTEM, _preparation(turn_budget(total, PREPARATION_SYSTEM,
                                                              repairable=False))),
    ]
    skill_alone = estimate_tokens(skill())
    for request in requests:
        if request.system == OPTIMIZER_SYSTEM and skill_alone > total:
            continue  # a skill larger than the budget is never cut (see the next test)
        assert _tokens(request) <= total, (request.system[:20], _tokens(request), total)
        # The repair of a reply as long as the optimizer may write (16,384 tokens of text)
        # still fits: the reply is clipped, never the prompt that asked for it.
        repair = repair_request(request, text(16384 * 4), "the JSON object", budget=total)
        assert _tokens(repair) <= total
        assert repair.messages[0] == request.messages[0]
        assert repair.messages[1].text().endswith("…(clipped)")


def test_the_default_budget_gives_up_no_failure_row_or_diagnosis():
    total = Config().prompt_tokens
    generation = _generation(turn_budget(total, OPTIMIZER_SYSTEM))
    first = generation.splitlines()[0]
    assert "failures" not in first and "trajectories" not in first  # at most some examples
    assert generation.count("diagnosis (verified)") == 6
    # 120 attempts with the longest themes and reasons: the paper's every-attempt history gives
    # up its form rows and its oldest attempts, never a failure or the intermediate skill; the
    # released profile's two rows per strategy fit whole
    selection = _selection(turn_budget(total, SELECTION_SYSTEM))
    note = selection.splitlines()[0]
    assert re.fullmatch(r"Note: .*; left out: \d+ attempts by form(, \d+ older attempts)?\.", note)
    assert selection.count("Every attempt, newest first:\n- round 40 ") == 1
    released = _selection(turn_budget(total, SELECTION_SYSTEM), past_revisions=True)
    assert "left out" not in released


def test_a_skill_larger_than_the_budget_is_kept_whole():
    prompt = _generation(2_000)
    assert skill() in prompt  # edits must match the skill exactly: never cut
    assert prompt.startswith("Note: this prompt was shortened")
    assert prompt.count("- [train-") == 1  # the last resort: the first failure only


def test_the_generation_prompt_drops_examples_first_then_trajectories_then_failures():
    full = _generation(10**6)
    size = estimate_tokens(full)
    examples = estimate_tokens("\n".join(e.line for e in largest_feedback().examples))
    fewer_examples = _generation(size - examples // 2)
    assert "solved examples left out to fit the prompt budget" in fewer_examples
    assert fewer_examples.count("- [train-") == 12 and "[ok-0]" in fewer_examples
    no_successes = _generation(size - examples - 50)
    assert "[ex-" not in no_successes and "successful trajectories" in no_successes.splitlines()[0]
    fewer_failures = _generation(size - size // 3)
    first = fewer_failures.splitlines()[0]
    assert re.search(r"left out: 10 solved examples, 3 successful trajectories, \d+ failures", first)
    assert 3 <= fewer_failures.count("- [train-") < 12
    assert "- [train-0000]" in fewer_failures  # the first failures stay


def test_an_F2_prompt_keeps_two_examples_as_long_as_failures_go_first():
    def f2(budget: int) -> str:
        """The prompt up to its forms (the patch-format example below copies one sample)."""
        return generation_prompt(skill_text="Answer.", feedback=largest_feedback(),
                                 forms=(Form.F2,), n_candidates=1, max_edits=6,
                                 budget=budget).split("## Revision forms")[0]

    # 4 failures, not 5: the patch-format example repeats the first sample (900 characters here)
    assert f2(8_000).count("[ex-") == 2 and f2(8_000).count("- [train-") == 4
    assert f2(1_000).count("[ex-") == 1 and f2(1_000).count("- [train-") == 1


def _strategy_rows(prompt: str) -> list[str]:
    block = prompt.split("## Strategy history")[1].split("## Form history")[0]
    return re.findall(r"^- round (\d+) ", block, re.M)


def test_the_selection_prompt_drops_older_history_rows_before_failures():
    """Paper layout: the attempts newest first; the form rows go first, then the oldest
    attempts, then the intermediate skill's text, and failures beyond the first few last."""
    full = _selection(10**6)
    assert "Intermediate skill:" in full and full.count("- [train-") == 12
    rows = _strategy_rows(full)
    assert len(rows) == 120 and rows == sorted(rows, key=int, reverse=True)
    by_form = full.split("Attempts by the form chosen with the strategy")[1].split("## Refine")[0]
    assert len(re.findall(r"^- F3: round ", by_form, re.M)) == 120
    size = estimate_tokens(full)
    shorter = _selection(size - 200)
    assert "attempts by form left out" in shorter and "older attempts left out" not in shorter
    rows_only = _selection(size - estimate_tokens(by_form))
    assert "older attempts left out" in rows_only  # before the s~ text and the failures
    assert rows_only.count("- [train-") == 12 and "Intermediate skill:" in rows_only
    kept = _strategy_rows(rows_only)
    assert kept and kept == rows[:len(kept)]  # the newest rows stay
    attempts = full.split("Every attempt, newest first:")[1].split("## Form history")[0]
    no_text = _selection(size - estimate_tokens(by_form) - estimate_tokens(attempts)
                         - estimate_tokens(skill(3)) // 2)
    assert "Intermediate skill:" not in no_text and no_text.count("- [train-") == 12
    tight = _selection(2_500)
    assert tight.count("- [train-") == KEEP_FAILURES and "Intermediate skill:" not in tight
    assert "intermediate skill text left out" in tight
    assert _strategy_rows(tight) == []


def test_the_released_history_drops_its_oldest_rows_first():
    full = _selection(10**6, past_revisions=True)
    rows = re.findall(r"^- round (\d+) ", full.split("## Strategy history")[1], re.M)
    assert rows and rows == sorted(rows, key=int)
    shorter = _selection(estimate_tokens(full) - 200, past_revisions=True)
    assert "older history rows left out" in shorter
    kept = re.findall(r"^- round (\d+) ", shorter.split("## Strategy history")[1], re.M)
    assert kept and kept == rows[len(rows) - len(kept):]


def test_the_preparation_prompt_keeps_the_first_failures_and_shows_them_blind_if_it_can():
    prompt = _preparation(12_000)
    assert prompt.count('solve="yes"') >= KEEP_FAILURES
    assert "solved samples" in prompt.splitlines()[0] and "failures" in prompt.splitlines()[0]
    fitted = preparation_prompt(format_lines=[], failures=[], successes=[], budget=2_000,
                                keep_failures=KEEP_FAILURES)
    assert fitted.dropped == () and fitted.tokens == estimate_tokens(fitted.text)
    tight = _preparation(2_000)  # the whole inputs cannot fit: short inputs, expected shown
    assert '<sample id="train-0000" solve="no">' in tight and 'solve="yes">' not in tight
    assert estimate_tokens(tight) <= 2_000


def test_fit_to_context_leaves_room_for_the_reply_and_names_a_window_too_small():
    assert fit_to_context(Config(), None) == Config()
    assert fit_to_context(Config(), 1_000_000) == Config()  # never raised
    small = fit_to_context(Config(optimizer_max_tokens=700), 4_096)
    assert small.prompt_tokens == 4_096 - 700 - 64
    default = fit_to_context(Config(), 4_096)  # 16,384 output tokens asked: a third kept
    assert default.prompt_tokens == 4_096 - 4_096 // 3 - 64
    with pytest.raises(ConfigError, match=r"a context window of 1,024 tokens .* at least 1,"):
        fit_to_context(Config(optimizer_max_tokens=700), 1_024)


GGUF = None
if importlib.util.find_spec("llama_cpp") is not None:
    from tests.test_llm_llamacpp import GGUF  # noqa: F811


@pytest.mark.local_model
@pytest.mark.skipif(GGUF is None, reason="llama-cpp-python and the SmolLM2 GGUF are not installed")
def test_the_estimate_is_above_a_real_tokenizer_on_the_largest_prompts():
    import llama_cpp

    model = llama_cpp.Llama(str(GGUF), vocab_only=True, verbose=False)
    for prompt in (_generation(10**6), _selection(10**6), _preparation(10**6)):
        real = len(model.tokenize(prompt.encode(), add_bos=False))
        assert estimate_tokens(prompt) >= real


@pytest.mark.parametrize("budget", [2_000, 6_000, 12_000, 40_000])
def test_the_preparation_prompt_names_what_it_kept_as_its_text_shows_it(budget):
    """The prompt carries the ids of the failures it kept, of those shown blind and of the
    solved samples kept: the ids its text shows, read here from the text as a check."""
    failures = [PrepCase(sample_id=f"train-{i:04d}", input=text(600, i), output=text(400, i),
                         blind=text(SOLVE_INPUT_CHARS, i) if i % 3 else None,
                         expected=text(200, i)) for i in range(12)]
    successes = [PrepCase(sample_id=f"ok-{i}", input=text(600, i), output=text(400, i),
                          solved=True) for i in range(3)]
    prompt = preparation_prompt(format_lines=[], failures=failures, successes=successes,
                                budget=budget, keep_failures=KEEP_FAILURES)
    shown = set(re.findall(r'<sample id="([^"]+)" solve="', prompt.text))
    assert prompt.shown == shown and shown  # at least the first failure, whatever the budget
    assert prompt.blind == set(re.findall(r'<sample id="([^"]+)" solve="yes">', prompt.text))
    assert prompt.solved == set(re.findall(r'<sample id="([^"]+)" solved="yes">', prompt.text))
    assert prompt.blind <= prompt.shown
