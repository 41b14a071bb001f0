"""Pure task logic: prompt builders and scorers for the four benchmarks and custom tasks.

Loaders that read disk and the SpreadsheetBench task (its scorer runs code in a sandbox) live
in `replay.tasks`; everything here is a pure function of its arguments.
"""

from stratune_core.tasks.common import Placement, Splits, target_request
from stratune_core.tasks.custom import CustomItem, CustomTask
from stratune_core.tasks.custom_scorers import Scorer, builtin_scorer
from stratune_core.tasks.docvqa import DocVQAItem, DocVQATask
from stratune_core.tasks.livemath import LiveMathItem, LiveMathTask, parse_label
from stratune_core.tasks.mind2web import Mind2WebTask, parse_action
from stratune_core.tasks.mind2web_records import Mind2WebItem, parse_record

__all__ = [
    "CustomItem",
    "CustomTask",
    "DocVQAItem",
    "DocVQATask",
    "LiveMathItem",
    "LiveMathTask",
    "Mind2WebItem",
    "Mind2WebTask",
    "Placement",
    "Scorer",
    "Splits",
    "builtin_scorer",
    "parse_action",
    "parse_label",
    "parse_record",
    "target_request",
]
