"""An OpenAI-compatible server's context window and prompt counts, from whatever it offers.

The window, asked once: vLLM reports `max_model_len` in `GET /v1/models`; llama.cpp's
`llama-server` reports each slot's `n_ctx` in `GET /props`; llama-cpp-python's server and ollama
report nothing, so the model spec's `?n_ctx=` gives it (what the server was started with).

A prompt's tokens, by the server's own tokenizer: vLLM's `POST /tokenize` counts the chat as
rendered; `llama-server` renders it with `POST /apply-template` and counts with `POST /tokenize`;
llama-cpp-python's `POST /extras/tokenize/count` counts plain text, so the messages' texts are
counted there and each message's template tokens are bounded by a fixed allowance.
"""

from __future__ import annotations

import enum
import json
import threading
from typing import Any

from llm_cache.backends.openai_context import count_from_tokenize, server_root, window_from_models

# Template tokens per message beside its text (ChatML spends 5: start, role, newline, end,
# newline), plus the generation prompt and a default system prompt some templates add when the
# chat has none (SmolLM2's: about 20): a bound for servers that count plain text only.
TEMPLATE_PER_MESSAGE = 8
TEMPLATE_FIXED = 32


class ServerKind(enum.Enum):
    UNKNOWN = "unknown"
    VLLM = "vllm"
    LLAMA_SERVER = "llama-server"


# How each server's window is raised, named in overflow advice.
_FLAGS = {
    ServerKind.VLLM: "vLLM's --max-model-len",
    ServerKind.LLAMA_SERVER: "llama-server --ctx-size (per slot: divided by --parallel)",
}
ALL_FLAGS = ("the server's context (llama-cpp-python --n_ctx, llama-server --ctx-size, "
             "vLLM --max-model-len, ollama num_ctx)")


class ServerWindow:
    """What one server says about its window; asked once, from any thread."""

    def __init__(self, base_url: str, model: str, *, n_ctx: int | None,
                 connect_timeout: float) -> None:
        self.root = server_root(base_url)
        self.model = model
        self.n_ctx = n_ctx  # the spec's ?n_ctx=: used when the server reports nothing
        self.kind = ServerKind.UNKNOWN
        self._connect_timeout = connect_timeout
        self._window: int | None = None
        self._asked = False
        self._lock = threading.Lock()
        self._counters = ["vllm", "llama-server", "llama-cpp-python"]

    def setting(self) -> str:
        """How the user raises this server's window, for overflow advice."""
        own = _FLAGS.get(self.kind, ALL_FLAGS)
        return own if self.kind is not ServerKind.UNKNOWN or self.n_ctx is None else \
            f"{own}, then ?n_ctx= in the model spec"

    def tokens(self, headers: dict[str, str]) -> int | None:
        with self._lock:
            if not self._asked:
                self._window = self._ask(headers)
            return self._window

    def _ask(self, headers: dict[str, str]) -> int | None:
        import httpx2

        timeout = httpx2.Timeout(30.0, connect=self._connect_timeout)
        try:
            models = httpx2.get(f"{self.root}/v1/models", headers=headers, timeout=timeout)
            window = _json_or_none(models, lambda d: window_from_models(d, self.model))
            if window is not None:
                self.kind = ServerKind.VLLM
            else:
                props = httpx2.get(f"{self.root}/props", headers=headers, timeout=timeout)
                window = _json_or_none(props, window_from_props)
                if window is not None:
                    self.kind = ServerKind.LLAMA_SERVER
        except httpx2.TransportError:
            return self.n_ctx  # unreachable now: the call itself fails and is retried; ask again
        self._asked = True
        if self.kind is ServerKind.VLLM:
            self._counters = ["vllm"]
        elif self.kind is ServerKind.LLAMA_SERVER:
            self._counters = ["llama-server"]
        return window if window is not None else self.n_ctx

    async def count(self, client: Any, headers: dict[str, str],
                    messages: list[dict[str, Any]]) -> int | None:
        """The prompt's tokens by the server's tokenizer, or None when it offers no way."""
        for name in list(self._counters):
            found, counted = await _COUNTERS[name](self, client, headers, messages)
            if found:
                self._counters = [name]  # this server's way: never try the others again
                return counted
            self._counters.remove(name)
        return None

    async def _vllm(self, client: Any, headers: dict[str, str],
                    messages: list[dict[str, Any]]) -> tuple[bool, int | None]:
        reply = await client.post(f"{self.root}/tokenize", headers=headers, json={
            "model": self.model, "messages": messages, "add_generation_prompt": True})
        count = _json_or_none(reply, count_from_tokenize)
        return count is not None, count

    async def _llama_server(self, client: Any, headers: dict[str, str],
                            messages: list[dict[str, Any]]) -> tuple[bool, int | None]:
        rendered = await client.post(f"{self.root}/apply-template", headers=headers,
                                     json={"messages": messages})
        prompt = _json_or_none(rendered, lambda d: d.get("prompt") if isinstance(d, dict) else None)
        if not isinstance(prompt, str):
            return False, None
        reply = await client.post(f"{self.root}/tokenize", headers=headers,
                                  json={"content": prompt, "add_special": True})
        tokens = _json_or_none(reply, lambda d: d.get("tokens") if isinstance(d, dict) else None)
        return isinstance(tokens, list), len(tokens) if isinstance(tokens, list) else None

    async def _llama_cpp_python(self, client: Any, headers: dict[str, str],
                                messages: list[dict[str, Any]]) -> tuple[bool, int | None]:
        if any(not isinstance(m.get("content"), str) for m in messages):
            return True, None  # images: plain-text counting cannot see them
        text = "\n".join(f"{m['role']}\n{m['content']}" for m in messages)
        reply = await client.post(f"{self.root}/extras/tokenize/count", headers=headers,
                                  json={"model": self.model, "input": text})
        count = _json_or_none(reply, count_from_tokenize)
        if count is None:
            return False, None
        return True, count + TEMPLATE_PER_MESSAGE * len(messages) + TEMPLATE_FIXED


_COUNTERS = {
    "vllm": ServerWindow._vllm,
    "llama-server": ServerWindow._llama_server,
    "llama-cpp-python": ServerWindow._llama_cpp_python,
}


def window_from_props(data: Any) -> int | None:
    """A slot's `n_ctx` in llama-server's `/props` (where a request has to fit)."""
    if not isinstance(data, dict):
        return None
    settings = data.get("default_generation_settings")
    value = settings.get("n_ctx") if isinstance(settings, dict) else data.get("n_ctx")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _json_or_none(reply: Any, pick: Any) -> Any:
    if reply.status_code != 200:
        return None
    try:
        return pick(json.loads(reply.content))
    except ValueError:
        return None
