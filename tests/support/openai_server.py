"""An in-process OpenAI-compatible server on 127.0.0.1 that records every request it gets.

It counts tokens one per word plus four per message, and behaves as the server `flavour` names:

- vLLM (`vllm-old`, `vllm-too-large`, `vllm-at-least`: its three refusal wordings): the window
  as `max_model_len` in `GET /v1/models` (`window=True`), chat counting by `POST /tokenize`
  (`tokenize=True`), a refusal of prompt + max_tokens over the window.
- `llama-server` (llama.cpp): the window as the slot's `n_ctx` in `GET /props` (`window=True`),
  `POST /apply-template` and `POST /tokenize {"content"}` (`tokenize=True`), a refusal only of a
  prompt that alone fills the window.
- `llama-cpp-python`: no window anywhere, `POST /extras/tokenize/count` of plain text
  (`tokenize=True`), and a `max_tokens` over what the prompt leaves silently cut to it.
- `ollama`: nothing reported, a refusal without figures.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TEMPLATE = "<|im_start|>{role}\n{content}<|im_end|>\n"


def refusal(flavour: str, context: int, prompt: int, max_tokens: int) -> tuple[int, dict]:
    if flavour == "vllm-old":  # also llama-cpp-python's server, for chat completions
        return 400, {"object": "error", "type": "BadRequestError", "code": 400, "message": (
            f"This model's maximum context length is {context} tokens. However, you requested "
            f"{prompt + max_tokens} tokens ({prompt} in the messages, {max_tokens} in the "
            "completion). Please reduce the length of the messages or completion.")}
    if flavour == "vllm-too-large":
        return 400, {"error": {"type": "BadRequestError", "code": 400, "message": (
            f"'max_tokens' or 'max_completion_tokens' is too large: {max_tokens}. This model's "
            f"maximum context length is {context} tokens and your request has {prompt} input "
            f"tokens ({max_tokens} > {context} - {prompt}).")}}
    if flavour == "vllm-at-least":
        return 400, {"error": {"type": "BadRequestError", "code": 400, "message": (
            f"This model's maximum context length is {context} tokens. However, you requested "
            f"{max_tokens} output tokens and your prompt contains at least {prompt} input "
            f"tokens, for a total of at least {prompt + max_tokens} tokens.")}}
    if flavour == "llama-server":
        return 400, {"error": {"code": 400, "type": "exceed_context_size_error",
                               "message": "the request exceeds the available context size, "
                                          "try increasing it",
                               "n_prompt_tokens": prompt, "n_ctx": context}}
    if flavour == "ollama":
        return 400, {"error": "the input length exceeds the context length"}
    raise AssertionError(flavour)


class JsonServer:
    """A stdlib HTTP server on 127.0.0.1 speaking JSON; subclasses answer `get` and `post`."""

    def __init__(self) -> None:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                return None

            def do_GET(self):
                self.reply(*outer.get(self.path))

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                headers = {k.lower(): v for k, v in self.headers.items()}
                self.reply(*outer.post(self.path, body, headers))

            def reply(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def get(self, path: str) -> tuple[int, dict]:
        return 404, {"error": {"message": "not found"}}

    def post(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict]:
        return 404, {"error": {"message": "not found"}}

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class ContextServer(JsonServer):
    """See the module's docstring. `chat` holds every chat body, `paths` every request line."""

    def __init__(self, flavour: str, context: int, *, window: bool = False,
                 tokenize: bool = False) -> None:
        self.flavour, self.context = flavour, context
        self.window, self.tokenize = window, tokenize
        self.chat: list[dict] = []
        self.paths: list[str] = []
        super().__init__()

    def get(self, path: str) -> tuple[int, dict]:
        self.paths.append(f"GET {path}")
        return self.listing(path, self.window)

    def post(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict]:
        self.paths.append(f"POST {path}")
        if path == "/v1/chat/completions":
            self.chat.append(body)
            return self.answer(body)
        return self.count(path, body, self.tokenize)

    def listing(self, path: str, window: bool) -> tuple[int, dict]:
        if path == "/v1/models" and window and self.flavour.startswith("vllm"):
            return 200, {"object": "list", "data": [
                {"id": "other", "object": "model", "max_model_len": 99},
                {"id": "m", "object": "model", "max_model_len": self.context}]}
        if path == "/v1/models":  # what llama-cpp-python, llama-server and ollama list
            return 200, {"object": "list", "data": [{"id": "m", "object": "model"}]}
        if path == "/props" and window and self.flavour == "llama-server":
            return 200, {"default_generation_settings": {"n_ctx": self.context},
                         "total_slots": 1}
        return 404, {"error": {"message": "not found"}}

    def count(self, path: str, body: dict[str, Any], tokenize: bool) -> tuple[int, dict]:
        if not tokenize:
            return 404, {"error": {"message": "not found"}}
        if path == "/tokenize" and self.flavour.startswith("vllm"):
            return 200, {"count": tokens(body["messages"]), "max_model_len": self.context,
                         "tokens": []}
        if path == "/apply-template" and self.flavour == "llama-server":
            return 200, {"prompt": "".join(TEMPLATE.format(**m) for m in body["messages"])}
        if path == "/tokenize" and self.flavour == "llama-server":
            # llama-server counts only `content`; a vLLM-style body gets an empty list
            text = body.get("content", "")
            words = re.sub(r"<\|im_(start|end)\|>", " ", text).split()  # the role is one
            return 200, {"tokens": list(range(len(words) + 3 * text.count("<|im_end|>")))}
        if path == "/extras/tokenize/count" and self.flavour == "llama-cpp-python":
            return 200, {"count": len(body["input"].split())}
        return 404, {"error": {"message": "not found"}}

    def answer(self, body: dict) -> tuple[int, dict]:
        prompt, wanted = tokens(body["messages"]), body["max_tokens"]
        # vLLM refuses prompt + max_tokens over the window; the others only a prompt that
        # alone fills it (they stop generating at the window's end).
        over = prompt + wanted > self.context if self.flavour.startswith("vllm") \
            else prompt >= self.context
        if over:
            return refusal(self.flavour, self.context, prompt, wanted)
        return 200, {"model": body["model"], "choices": [
            {"message": {"role": "assistant", "content": "fine"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": 1}}



def tokens(messages: list[dict]) -> int:
    return sum(len(m["content"].split()) + 4 for m in messages)
