"""In-process llama.cpp for local GGUF models (optional extra `local`: llama-cpp-python).

Temperature-0 output is byte-identical only if every call starts from the same KV state:
llama-cpp-python otherwise reuses the longest matching prefix of the *previous* call, and the
different batch split changes float sums and so the greedy path. Two modes, both part of the
canonical model id (and thus the cache key) because they give different texts:

- reset:    `reset()` before every call.
- snapshot: evaluate the skill prefix once, `save_state()`, and `load_state()` before each call
            (one saved state, rebuilt when the skill changes): faster, equally deterministic.

The reply shares the `n_ctx` window with the prompt. Each call renders the chat exactly as
llama-cpp-python will (the GGUF's own template and tokenizer), counts its tokens and lowers
`max_tokens` to what is left (`Response.clamped_max_tokens`); a prompt that leaves no room is a
`ContextOverflowError` naming the `n_ctx` it needs.
"""

from __future__ import annotations

import asyncio
import re
import threading
from pathlib import Path
from typing import Any

from llm_cache.backends.base import BackendBase, refuse_blank_text, system_text
from llm_cache.backends.context import fit_max_tokens, too_long
from llm_cache.backends.llamacpp_check import check_library
from llm_cache.backends.llamacpp_tools import parse_reply, template_messages, template_tools
from llm_cache.errors import LLMFatalError
from llm_cache.model_spec import LLAMACPP_MODES, ModelSpec, canonical_gguf
from llm_cache.records import Request, Response, Usage
from llm_cache.retry import RetryDecision

_FINISH = {"stop": "end_turn", "length": "max_tokens"}
_TOO_LONG = re.compile(r"Requested tokens \((\d+)\) exceed context window")


class LlamaCppBackend(BackendBase):
    def __init__(
        self,
        path: str | Path,
        *,
        threads: int = 2,
        mode: str = "reset",
        n_ctx: int = 4096,
        seed: int = 0,
    ) -> None:
        if mode not in LLAMACPP_MODES:
            raise ValueError(f"llama.cpp mode must be one of {LLAMACPP_MODES}, got {mode!r}")
        self.path = Path(path)
        self.threads = threads
        self.mode = mode
        self.n_ctx = n_ctx
        self.seed = seed
        self.canonical = canonical_gguf(str(path), mode)
        self.name = f"llamacpp:{self.canonical}"
        # One model instance is not thread-safe, and 2 threads already use both cores.
        self.concurrency = 1
        self._llm: Any = None
        self._lock = threading.Lock()
        self._snapshot: tuple[str, Any] | None = None  # (skill prefix text, saved state)

    @classmethod
    def from_spec(cls, spec: ModelSpec, **options: Any) -> LlamaCppBackend:
        return cls(
            spec.model,
            threads=int(options.pop("threads", 2)),
            mode=str(options.pop("mode", "reset")),
            n_ctx=int(options.pop("n_ctx", 4096)),
            seed=int(options.pop("seed", 0)),
            **options,  # anything left is unknown and makes the constructor complain
        )

    def _model(self) -> Any:
        if self._llm is None:
            if not self.path.is_file():
                raise LLMFatalError(f"GGUF file {self.path} does not exist; fix the model spec")
            # Before the import: a library built for another CPU must crash a child, not the run.
            check_library(self.path)
            try:
                from llama_cpp import Llama
            except ImportError:
                raise LLMFatalError(
                    "llama.cpp backend needs llama-cpp-python: pip install 'stratune[local]'"
                ) from None
            self._llm = Llama(
                model_path=str(self.path), n_ctx=self.n_ctx, n_threads=self.threads,
                n_threads_batch=self.threads, seed=self.seed, verbose=False,
            )
        return self._llm

    def context_tokens(self) -> int:
        """The window every call must fit in: prompt and reply together."""
        return self.n_ctx

    def complete_sync(self, request: Request) -> Response:
        if request.tools:
            return self._complete_with_tools(request)
        refuse_blank_text(request, self.name)
        system = system_text(request)
        with self._lock:
            llm = self._model()
            messages = _chat_messages(request)
            clamped = fit_max_tokens(
                request, self._prompt_tokens(llm, messages), self.n_ctx,
                where=f"{self.name} ({request.kind.value})",
                setting=self._setting(),
                trained=int(llm._model.n_ctx_train()),
            )
            if self.mode == "snapshot" and system is not None:
                llm.load_state(self._prefix_state(llm, system))
            else:
                llm.reset()
            temperature = 0.0 if request.temperature is None else float(request.temperature)
            try:
                result = llm.create_chat_completion(
                    messages=messages, max_tokens=clamped or request.max_tokens,
                    temperature=temperature, stop=list(request.stop) or None, seed=self.seed,
                )
            except ValueError as exc:  # a chat format the count above only approximates
                found = _TOO_LONG.search(str(exc))
                if found is None:
                    raise
                raise too_long(f"{self.name} ({request.kind.value})", int(found.group(1)),
                               self.n_ctx, request, setting=self._setting()) from None
        choice = result["choices"][0]
        usage = result.get("usage") or {}
        return Response(
            text=choice["message"].get("content") or "",
            stop_reason=_FINISH.get(choice.get("finish_reason") or "stop", "end_turn"),
            model=self.canonical,
            usage=Usage(input_tokens=int(usage.get("prompt_tokens", 0)),
                        output_tokens=int(usage.get("completion_tokens", 0))),
            clamped_max_tokens=clamped,
        )

    def _complete_with_tools(self, request: Request) -> Response:
        """An episode's turn: the chat template renders the tools and the calls so far, the
        model completes the prompt, and its calls are read back (`llamacpp_tools`)."""
        with self._lock:
            llm = self._model()
            if not llm.metadata.get("tokenizer.chat_template"):
                raise LLMFatalError(f"{self.path} has no chat template, which tool calls need")
            rendered = _formatter(llm, generation_prompt=True)(
                messages=template_messages(request), tools=template_tools(request))
            tokens = llm.tokenize(rendered.prompt.encode("utf-8"),
                                  add_bos=not rendered.added_special, special=True)
            clamped = fit_max_tokens(request, len(tokens), self.n_ctx,
                                     where=f"{self.name} ({request.kind.value})",
                                     setting=self._setting(),
                                     trained=int(llm._model.n_ctx_train()))
            llm.reset()
            temperature = 0.0 if request.temperature is None else float(request.temperature)
            stop = [*request.stop, *(rendered.stop if isinstance(rendered.stop, list) else
                                     [rendered.stop] if rendered.stop else [])]
            result = llm.create_completion(tokens, max_tokens=clamped or request.max_tokens,
                                           temperature=temperature, stop=stop or None,
                                           seed=self.seed)
        choice = result["choices"][0]
        usage = result.get("usage") or {}
        text, calls = parse_reply(choice.get("text") or "", request)
        return Response(
            text=text, tool_calls=calls,
            stop_reason="tool_use" if calls else _FINISH.get(choice.get("finish_reason") or
                                                             "stop", "end_turn"),
            model=self.canonical,
            usage=Usage(input_tokens=int(usage.get("prompt_tokens", 0)),
                        output_tokens=int(usage.get("completion_tokens", 0))),
            clamped_max_tokens=clamped,
        )

    def _setting(self) -> str:
        return f"n_ctx in the model spec (?n_ctx=N; now {self.n_ctx})"

    def _prompt_tokens(self, llm: Any, messages: list[dict[str, str]]) -> int:
        """Tokens of the prompt llama-cpp-python will evaluate for these messages."""
        if llm.metadata.get("tokenizer.chat_template"):
            rendered = _formatter(llm, generation_prompt=True)(messages=messages)
            return len(llm.tokenize(rendered.prompt.encode("utf-8"),
                                    add_bos=not rendered.added_special, special=True))
        # No template: llama-cpp-python wraps the texts in its fallback format, whose few
        # markers per message the margin absorbs.
        text = "\n".join(m["content"] for m in messages)
        return len(llm.tokenize(text.encode("utf-8"), add_bos=True, special=False)) \
            + 4 * len(messages)

    def _prefix_state(self, llm: Any, system: str) -> Any:
        if self._snapshot is not None and self._snapshot[0] == system:
            return self._snapshot[1]
        if not llm.metadata.get("tokenizer.chat_template"):
            raise LLMFatalError(
                f"{self.path} has no chat template; use mode=reset for this model"
            )
        formatter = _formatter(llm, generation_prompt=False)
        rendered = formatter(messages=[{"role": "system", "content": system}])
        tokens = llm.tokenize(rendered.prompt.encode("utf-8"),
                              add_bos=not rendered.added_special, special=True)
        llm.reset()
        llm.eval(tokens)
        state = llm.save_state()
        self._snapshot = (system, state)
        return state

    async def acomplete(self, request: Request) -> Response:
        return await asyncio.to_thread(self.complete_sync, request)

    def classify(self, exc: BaseException) -> RetryDecision:
        # A local failure (bad file, context overflow) does not heal by trying again.
        return RetryDecision.no(f"{type(exc).__name__}: {exc}")

    async def aclose(self) -> None:
        return None

    def close(self) -> None:
        with self._lock:
            if self._llm is not None:
                self._llm.close()
                self._llm = None
                self._snapshot = None


def _chat_messages(request: Request) -> list[dict[str, str]]:
    system = system_text(request)
    messages = [{"role": "system", "content": system}] if system is not None else []
    messages += [{"role": m.role, "content": m.text()} for m in request.messages]
    return messages


def _formatter(llm: Any, *, generation_prompt: bool) -> Any:
    """The GGUF chat template as llama-cpp-python itself renders it for chat completions."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    eos, bos = llm.token_eos(), llm.token_bos()
    return Jinja2ChatFormatter(
        template=llm.metadata["tokenizer.chat_template"],
        eos_token=llm._model.token_get_text(eos) if eos != -1 else "",
        bos_token=llm._model.token_get_text(bos) if bos != -1 else "",
        add_generation_prompt=generation_prompt,
    )
