"""The bundled stock task: reproducible from its generator, an agent task whose answers only its
pure inventory tools know, and whose tools take a product code exactly as written."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from llm_cache.records import Response
from replay.models import specs as models
from replay.rundir.serde import TaskSpec
from replay.tasks import bundled
from replay.tasks.registry import BUILT_IN
from replay.tools.declared import declare
from stratune_core.tasks.agent import AgentTask
from tests.support.generators import generator

FOLDER = Path(__file__).resolve().parents[1] / "replay/data/stock"


def test_committed_files_equal_generator_output() -> None:
    for name, content in generator("stock").render().items():
        assert (FOLDER / name).read_text(encoding="utf-8") == content, name


def test_a_bundled_agent_task_with_balanced_strata_and_no_shared_products() -> None:
    assert "stock" in BUILT_IN and bundled.bundled_tools("stock") == (bundled.TOOLS["stock"],)
    task = models.load_task(TaskSpec(spec="stock", limit=8, tools=bundled.bundled_tools("stock")))
    assert isinstance(task, AgentTask) and {t.name for t in task.info.tools} == {"stock", "price"}
    assert Counter(s.stratum for s in task.split("train")) == {
        "stock": 2, "stock-customer": 2, "price": 2, "price-customer": 2}
    full = bundled.load("stock")
    codes = [s.payload.input.split("SKU-")[1][:4] for split in ("train", "test")
             for s in full.split(split)]
    assert len(codes) == len(set(codes)) == 180  # no test product is seen in training


def test_the_tools_answer_the_expected_values_and_are_pure() -> None:
    from replay.data.stock.tools import TOOLS

    stock, price = (declare(t) for t in TOOLS)
    assert stock.pure and price.pure
    inventory = json.loads((FOLDER / "inventory.json").read_text())
    task = bundled.load("stock")
    for sample in task.split("test"):
        sku = "SKU-" + sample.payload.input.split("SKU-")[1][:4]
        tool = price if sample.stratum.startswith("price") else stock
        got = tool.call({"sku": sku})
        assert str(got) == sample.payload.expected == str(
            inventory[sku]["price" if tool is price else "units"])
        assert task.score(sample, (Response(text=f"{got}"),)).value == 1.0
