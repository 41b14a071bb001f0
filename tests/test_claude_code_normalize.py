"""What the cache key of a harness API call leaves out: each normalization rule on a body as
the CLI writes it, and the body sent upstream left as it was."""

from __future__ import annotations

import copy

from replay.harness.normalize import normalized

PATHS = {"project": "/tmp/stratune-episode-ab12/project", "home": "/tmp/stratune-episode-ab12/home"}


def body(date: str = "2026-12-07", kernel: str = "Linux 6.18.44", version: str = "2.1.337.410",
         device: str = "d1", session: str = "s1", root: str = "/tmp/stratune-episode-ab12"
         ) -> dict:
    return {
        "model": "claude-haiku-4-5", "max_tokens": 32000, "stream": True,
        "metadata": {"user_id": f'{{"device_id":"{device}","session_id":"{session}"}}'},
        "system": [{"type": "text", "text": f"x-anthropic-billing-header: cc_version={version};"},
                   {"type": "text", "text": "You are an agent.", "cache_control":
                    {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": [
            {"type": "text", "text": f" - Primary working directory: {root}/project\n"
                                     f" - OS Version: {kernel}\nToday's date is {date}."},
            {"type": "text", "text": f"Base directory for this skill: {root}/project/.claude"
                                     "/skills/s", "cache_control": {"type": "ephemeral"}}]}],
    }


def test_ids_dates_kernel_version_paths_and_cache_markers_do_not_change_the_key():
    one = normalized(body(), PATHS)
    other_paths = {k: v.replace("ab12", "zz99") for k, v in PATHS.items()}
    two = normalized(body(date="2027-01-02", kernel="Linux 7.0", version="2.1.400.1",
                          device="d2", session="s2", root="/tmp/stratune-episode-zz99"),
                     other_paths)
    assert one == two
    assert "metadata" not in one and "stream" not in one
    text = str(one)
    assert "cache_control" not in text and "cc_version=<version>" in text
    assert "Today's date is <date>" in text and "OS Version: <os>" in text
    assert "<project>/.claude/skills/s" in text


def test_what_the_model_reads_does_change_the_key():
    base = normalized(body(), PATHS)
    changed = body()
    changed["messages"][0]["content"][1]["text"] += " Reply in French."
    assert normalized(changed, PATHS) != base
    assert normalized({**body(), "model": "claude-sonnet-4-6"}, PATHS) != base


def test_the_body_itself_is_left_as_the_cli_wrote_it():
    original = body()
    kept = copy.deepcopy(original)
    normalized(original, PATHS)
    assert original == kept


def test_a_written_out_date_and_current_date_are_normalized():
    paths = {"tmp": "/tmp/stratune-episode-ab12/tmp"}
    one = normalized({"system": "Today's date is December 7, 2026. currentDate: 2026-12-07 "
                                "/tmp/stratune-episode-ab12/tmp/x"}, paths)
    two = normalized({"system": "Today's date is January 12, 2027. currentDate: 2027-01-12 "
                                "/tmp/stratune-episode-zz99/tmp/x"},
                     {"tmp": "/tmp/stratune-episode-zz99/tmp"})
    assert one == two == {"system": "Today's date is <date>. currentDate: <date> <tmp>/x"}
