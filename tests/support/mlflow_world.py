"""The toy world's words as an MLflow prompt-optimization problem, for `stratune.mlflow` tests.

A registered text prompt asks for the word; the predict_fn formats it and sends it through the
Anthropic SDK to the project's fake server, whose target applies the toy rules the prompt
holds, so the toy optimizer's rules change what the predict_fn returns. The scorer is an MLflow
`@scorer` whose rationale names the word's marker, as the toy task's feedback does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import anthropic
import mlflow
from mlflow.entities import Feedback
from mlflow.genai.scorers import scorer

from llm_cache.records import Message, Request, Role
from tests.support.toy import TRANSFORMS, ToyOptimizer, body_request, make_samples, toy_target

TARGET = "claude-haiku-4-5"
OPTIMIZER = "claude-sonnet-4-6"
TEMPLATE = ("Answer with the word.\nReturn the final answer inside <answer>...</answer> tags.\n\n"
            "Word: {{Word}}")


def records(n: int, offset: int = 0) -> list[dict[str, Any]]:
    out = []
    for sample in make_samples(n, offset, markers=("U", "R", "D", "S", "P")):
        word, marker = sample.payload["word"], sample.payload["marker"]
        gold = TRANSFORMS[marker](word) if marker in TRANSFORMS else word
        out.append({"inputs": {"Word": f"{word} [{marker}]"}, "outputs": gold})
    return out


@scorer
def exact(inputs: dict[str, Any], outputs: str, expectations: dict[str, Any]) -> Feedback:
    found = re.search(r"<answer>(.*?)</answer>", outputs or "")
    want = expectations["expected_response"]
    right = found is not None and found.group(1).strip() == want
    marker = inputs["Word"].split("[")[-1].rstrip("]")
    return Feedback(value=right, rationale="" if right else
                    f"the word has marker [{marker}]; expected {want}")


@scorer
def tagged(outputs: str) -> bool:
    """The reply holds an answer in <answer> tags."""
    return re.search(r"<answer>.*?</answer>", outputs or "") is not None


def weighted(scores: dict[str, Any]) -> float:
    """An `aggregation` for optimize_prompts: the right answer counts four times its tags.
    MLflow hands it each scorer's own return value (a Feedback, a bool)."""
    value = {name: float(getattr(v, "value", v)) for name, v in scores.items()}
    return 0.8 * value["exact"] + 0.2 * value["tagged"]


def predict_fn(uri: str) -> Any:
    """The user's function: the registered prompt, formatted, sent through the Anthropic SDK
    (ANTHROPIC_BASE_URL points it at the fake server)."""
    client = anthropic.Anthropic(max_retries=0)

    def predict(Word: str) -> str:  # noqa: N803 (the toy feedback's field)
        prompt = mlflow.genai.load_prompt(uri)
        reply = client.messages.create(model=TARGET, max_tokens=64, messages=[
            {"role": "user", "content": prompt.format(Word=Word)}])
        return "".join(block.text for block in reply.content if block.type == "text")

    return predict


def predict(Word: str) -> str:  # noqa: N803
    """`stratune optimize-prompts --predict tests.support.mlflow_world:predict`: the predict_fn
    of the registered prompt `words`."""
    return predict_fn("prompts:/words/1")(Word=Word)


def predict_two(Word: str) -> str:  # noqa: N803
    """A predict_fn of two prompts: the text prompt `rules` as the system prompt, the chat
    prompt `ask` as the messages."""
    system = mlflow.genai.load_prompt("prompts:/rules/1").format()
    messages = mlflow.genai.load_prompt("prompts:/ask/1").format(Word=Word)
    reply = anthropic.Anthropic(max_retries=0).messages.create(
        model=TARGET, max_tokens=64, system=system, messages=messages)
    return "".join(block.text for block in reply.content if block.type == "text")


def responder(optimizer: ToyOptimizer | None = None):
    """The target reads its rules from the system prompt and the user turn together, and its
    word from the user turn; the optimizer is the toy one."""
    opt = optimizer or ToyOptimizer(style="good")

    def respond(body: Mapping[str, Any]) -> str:
        if body["model"] == TARGET:
            request = body_request(body, Role.TARGET)
            text = request.messages[-1].text()
            return toy_target(Request(role=Role.TARGET, model=TARGET,
                                      system=f"{request.system}\n{text}",
                                      messages=(Message.user(text),), max_tokens=64)).text
        return opt(body_request(body, Role.OPTIMIZER)).text

    return respond
