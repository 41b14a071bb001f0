"""A scripted agent world on the bundled `stock` task: a target that calls the inventory tools
as well as its skill tells it to, and an optimizer that learns those instructions only from the
trajectories it is shown, so that a run learns through tool feedback.

The target, per turn: without a tool result yet it calls `stock` or `price` with the digits of
the product code (the prefix kept only when the skill says "SKU- included"); after a result it
calls again unless the skill says "do not call any tool again", and then answers the result.
The optimizer's candidate adds the rules a trajectory shows to be missing: the code's prefix when
a call was answered "no product", the stop when a tool was called again after its result.
"""

from __future__ import annotations

import json
import re

from llm_cache.records import Request, Response, ToolResultBlock, ToolUseBlock, Usage

PREFIX_RULE = ("Call stock or price with the product code exactly as the question writes it, "
               "SKU- included.")
STOP_RULE = "When a tool result has arrived, do not call any tool again: reply with its number."
_CODE = re.compile(r"SKU-(\d{4})")


def agent_target(request: Request) -> Response:
    question = request.messages[0].text()
    results = [b for m in request.messages for b in m.content if isinstance(b, ToolResultBlock)]
    skill = request.system
    usage = Usage(input_tokens=10, output_tokens=5)
    if results and "do not call any tool again" in skill:
        return Response(text=results[-1].content, usage=usage)
    found = _CODE.search(question)
    code = found.group(0) if found and "SKU- included" in skill else (found.group(1) if found
                                                                       else "?")
    tool = "price" if ("price" in question or "cost" in question) else "stock"
    turn = sum(1 for m in request.messages if m.role == "assistant")
    call = ToolUseBlock(id=f"toolu_{turn}", name=tool, input=json.dumps({"sku": code}))
    return Response(text="", stop_reason="tool_use", tool_calls=(call,), usage=usage)


def agent_optimizer(request: Request) -> Response:
    prompt = request.messages[0].text()
    usage = Usage(input_tokens=50, output_tokens=20)
    if request.system.startswith("You are the strategy controller"):
        return Response(text='{"strategy": "I1", "form": null, "why": "tool calls fail"}',
                        usage=usage)
    if request.system.startswith("You diagnose"):
        return Response(text="", usage=usage)
    if "<skill>" not in prompt:  # a baseline's reflection (GEPA: the instruction in a fence)
        fenced = re.search(r"```\n?(.*?)```", prompt, re.S)
        skill = fenced.group(1).strip() if fenced else ""
        rules = [r for r, seen in ((PREFIX_RULE, "no product"), (STOP_RULE, "turn 2 called"))
                 if seen in prompt and r not in skill]
        return Response(text="```\n" + "\n".join([skill, *rules]) + "\n```", usage=usage)
    skill = prompt.split("<skill>\n", 1)[1].split("\n</skill>", 1)[0]
    rules = []
    if "no product" in prompt and PREFIX_RULE not in skill:
        rules.append(PREFIX_RULE)
    if re.search(r"turn 2 called (stock|price)", prompt) and STOP_RULE not in skill:
        rules.append(STOP_RULE)
    if not rules or "## The target's tools" not in prompt:
        return Response(text="no change", usage=usage)
    edits = "".join(f'<edit op="append">\n{rule}\n</edit>\n' for rule in rules)
    return Response(usage=usage, text=(
        "<candidate>\n<form>F1</form>\n<theme>tool use</theme>\n<sources></sources>\n"
        f"{edits}</candidate>"))
